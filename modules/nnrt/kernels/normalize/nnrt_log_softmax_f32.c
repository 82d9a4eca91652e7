/*
 * float32 LOG_SOFTMAX over the last axis, TFLM's reference LogSoftmax: the row maximum
 * (std::max from the lowest float), the sum of expf(x - max) in order, logf of it, then
 * x - max - log_sum. Each row is read whole before it is written (in place).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/normalize.h"

nnrt_status_t nnrt_log_softmax_f32(const float *input, float *output, int32_t outer,
                                   int32_t depth)
{
    if (input == NULL || output == NULL || outer < 0 || depth < 1) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < outer; ++i) {
        const float *x = input + (ptrdiff_t)i * depth;
        float *y = output + (ptrdiff_t)i * depth;
        float max = -FLT_MAX;
        for (int32_t c = 0; c < depth; ++c) {
            max = max < x[c] ? x[c] : max;
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            sum += expf(x[c] - max);
        }
        const float log_sum = logf(sum);
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = x[c] - max - log_sum;
        }
    }
    return NNRT_OK;
}
