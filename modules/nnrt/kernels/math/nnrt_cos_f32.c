/*
 * float32 COS, TFLM's elementwise Cos (std::cos on float). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_cos_f32, cosf(x))
