/*
 * float32 CEIL, TFLM's reference Ceil (std::ceil). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_ceil_f32, ceilf(x))
