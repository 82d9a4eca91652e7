/*
 * float32 SIN, TFLM's elementwise Sin (std::sin on float). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_sin_f32, sinf(x))
