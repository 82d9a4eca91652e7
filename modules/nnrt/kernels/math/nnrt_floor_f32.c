/*
 * float32 FLOOR, TFLM's reference Floor (std::floor). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_floor_f32, floorf(x))
