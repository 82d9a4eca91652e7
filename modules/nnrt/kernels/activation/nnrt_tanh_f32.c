/* TANH float32 (TFLM reference_ops::Tanh). */
#include <math.h>

#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_tanh_f32, tanhf(x))
