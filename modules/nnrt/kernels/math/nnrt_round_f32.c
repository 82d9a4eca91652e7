/*
 * float32 ROUND, TFLM's reference RoundToNearest: half to even (banker's rounding),
 * computed from floorf and the difference as TFLM does. Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

static inline float round_half_even(float x)
{
    const float fl = floorf(x);
    const float diff = x - fl;
    /* diff == 0.5f only for |x| < 2^23, where the integer cast is exact */
    const int even = diff == 0.5f && ((long)fl % 2 == 0);
    return (diff < 0.5f || even) ? fl : fl + 1.0f;
}

NNRT_UNARY_F32_KERNEL(nnrt_round_f32, round_half_even(x))
