/*
 * float32 CUMSUM along one axis, TFLM's reference CumSum: for every position outside
 * the axis, an accumulator from 0.0f runs along it (from the end with reverse); an
 * exclusive sum writes the accumulator before adding the element. Each element is read
 * before its output is written, and no later step reads it: in place capable.
 */
#include <stddef.h>

#include "nnrt/kernels/reduce.h"

nnrt_status_t nnrt_cumsum_f32(const nnrt_cumsum_params_t *params, const float *input,
                              float *output)
{
    if (params == NULL || input == NULL || output == NULL || params->before < 1
        || params->depth < 1 || params->after < 1) {
        return NNRT_ERR_ARG;
    }
    const ptrdiff_t depth = params->depth;
    const ptrdiff_t after = params->after;
    for (ptrdiff_t b = 0; b < params->before; ++b) {
        for (ptrdiff_t a = 0; a < after; ++a) {
            float acc = 0.0f;
            for (ptrdiff_t d = 0; d < depth; ++d) {
                const ptrdiff_t k = params->reverse ? depth - 1 - d : d;
                const ptrdiff_t index = (b * depth + k) * after + a;
                const float v = input[index];
                if (params->exclusive) {
                    output[index] = acc;
                    acc += v;
                } else {
                    acc += v;
                    output[index] = acc;
                }
            }
        }
    }
    return NNRT_OK;
}
