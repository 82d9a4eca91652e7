/*
 * float32 ROUND, TFLM's reference RoundToNearest: half to even (banker's rounding),
 * computed from floorf and the difference as TFLM does. Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_round_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float fl = floorf(input[i]);
        const float diff = input[i] - fl;
        /* diff == 0.5f only for |x| < 2^23, where the integer cast is exact */
        const int even = diff == 0.5f && ((long)fl % 2 == 0);
        output[i] = (diff < 0.5f || even) ? fl : fl + 1.0f;
    }
    return NNRT_OK;
}
