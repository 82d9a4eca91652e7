/* SOFTMAX float32 (TFLM reference_ops::Softmax<float>): same operation order, so the
 * result is identical wherever expf() is. */
#include <float.h>
#include <math.h>

#include "nnrt/kernels/softmax.h"

nnrt_status_t nnrt_softmax_f32(float beta, const float *input, float *output, int32_t rows,
                               int32_t depth)
{
    if (input == NULL || output == NULL || NNRT_SOFTMAX_F32_ARGS_BAD(rows, depth)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t r = 0; r < rows; ++r) {
        const float *in = input + (size_t)r * (size_t)depth;
        float *out = output + (size_t)r * (size_t)depth;
        float max = -FLT_MAX;
        for (int32_t c = 0; c < depth; ++c) {
            if (max < in[c]) {
                max = in[c];
            }
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            const float e = expf((in[c] - max) * beta);
            out[c] = e;
            sum += e;
        }
        for (int32_t c = 0; c < depth; ++c) {
            out[c] = out[c] / sum;
        }
    }
    return NNRT_OK;
}
