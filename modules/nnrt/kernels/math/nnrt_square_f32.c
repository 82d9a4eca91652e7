/*
 * float32 SQUARE, TFLM's elementwise Square (x * x). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_square_f32, x * x)
