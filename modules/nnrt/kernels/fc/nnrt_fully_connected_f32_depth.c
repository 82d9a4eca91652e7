/*
 * float32 fully connected layers in slices along the input depth (fc_depth.h): the
 * weight rows of a large layer (VGG16's first fully connected layer: 25,088 float32
 * inputs, 100,352 B a row) stream in pieces smaller than a staging buffer, the partial
 * sums kept in an accumulator between the pieces. The order of the additions is the whole-depth kernels' (one running sum per
 * output in input order), so the result is theirs bit for bit.
 */
#include <stddef.h>

#include "nnrt/kernels/fc_depth.h"

#include "../internal/fc_depth.h"

nnrt_status_t nnrt_fully_connected_f32_depth(const nnrt_fc_f32_params_t *params,
                                             const float *input, const float *weights,
                                             const float *bias, float *output, float *acc,
                                             int32_t k0, int32_t k1, uint32_t flags)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL || acc == NULL
        || NNRT_FC_F32_PARAMS_BAD(params)
        || nnrt_fc_depth_bad(params->batches, params->accum_depth, params->output_depth, k0, k1)) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = k1 - k0;
    const int32_t units = params->output_depth;
    const float *x = input + k0;

    for (int32_t o = 0; o < units; ++o) {
        const float *w = weights + (size_t)o * (size_t)n;
        float a = (flags & NNRT_FC_DEPTH_FIRST) != 0u ? 0.0f : acc[o];
        for (int32_t d = 0; d < n; ++d) {
            a += x[d] * w[d];
        }
        acc[o] = a;
        if ((flags & NNRT_FC_DEPTH_LAST) != 0u) {
            float v = a + (bias != NULL ? bias[o] : 0.0f);
            v = v < params->act_min ? params->act_min : v;
            output[o] = params->act_max < v ? params->act_max : v;
        }
    }
    return NNRT_OK;
}
