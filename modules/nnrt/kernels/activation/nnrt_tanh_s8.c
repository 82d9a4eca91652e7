/* TANH int8 (TFLM reference_integer_ops::Tanh): Q4.27 input, Q0.31 tanh, output on
 * the fixed scale 1/128 with zero point 0 (internal/sigmoid.h). */
#include "nnrt/kernels/activation.h"
#include "../internal/sigmoid.h"

NNRT_SIGMOID_S8_KERNEL(nnrt_tanh_s8, nnrt_fp_tanh, 24, 0)
