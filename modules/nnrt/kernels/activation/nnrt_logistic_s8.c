/* LOGISTIC int8 (TFLM reference_integer_ops::Logistic): Q4.27 input, Q0.31 logistic,
 * output on the fixed scale 1/256 with zero point -128 (internal/sigmoid.h). */
#include "nnrt/kernels/activation.h"
#include "../internal/sigmoid.h"

NNRT_SIGMOID_S8_KERNEL(nnrt_logistic_s8, nnrt_fp_logistic, 23, -128)
