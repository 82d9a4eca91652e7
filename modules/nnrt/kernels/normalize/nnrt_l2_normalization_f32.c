/*
 * float32 L2_NORMALIZATION over the last axis, TFLM's reference L2Normalization: the sum
 * of squares in order, sqrtf, at least epsilon 1e-6f (TFLM's l2norm.cc), then x / norm.
 * Each row is read whole before it is written (in place).
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/normalize.h"

nnrt_status_t nnrt_l2_normalization_f32(const float *input, float *output, int32_t outer,
                                        int32_t depth)
{
    if (input == NULL || output == NULL || outer < 0 || depth < 1) {
        return NNRT_ERR_ARG;
    }
    const float epsilon = 1e-6f;
    for (int32_t i = 0; i < outer; ++i) {
        const float *x = input + (ptrdiff_t)i * depth;
        float *y = output + (ptrdiff_t)i * depth;
        float squared = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            squared += x[c] * x[c];
        }
        float norm = sqrtf(squared);
        norm = norm < epsilon ? epsilon : norm;
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = x[c] / norm;
        }
    }
    return NNRT_OK;
}
