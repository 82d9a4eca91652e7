/*
 * float32 fully connected, in the summation order of TFLM's reference FullyConnected
 * (see fc.h).
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"

nnrt_status_t nnrt_fully_connected_f32(const nnrt_fc_f32_params_t *params, const float *input,
                                       const float *weights, const float *bias, float *output)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL
        || NNRT_FC_F32_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const float act_min = params->act_min;
    const float act_max = params->act_max;

    for (int32_t b = 0; b < params->batches; ++b) {
        const float *x = input + (size_t)b * (size_t)depth;
        for (int32_t o = 0; o < units; ++o) {
            const float *w = weights + (size_t)o * (size_t)depth;
            float total = 0.0f;
            for (int32_t d = 0; d < depth; ++d) {
                total += x[d] * w[d];
            }
            float v = total + (bias != NULL ? bias[o] : 0.0f);
            v = v < act_min ? act_min : v;
            output[o] = act_max < v ? act_max : v;
        }
        output += units;
    }
    return NNRT_OK;
}
