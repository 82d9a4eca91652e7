/*
 * int8 fully connected layers in slices along the input depth (fc_depth.h): the
 * weight rows of a large layer (VGG16's first fully connected layer: 25,088 float32
 * inputs, 100,352 B a row) stream in pieces smaller than a staging buffer, the partial
 * sums kept in an accumulator between the pieces. The order of the additions is the whole-depth kernels' (one running sum per
 * output in input order), so the result is theirs bit for bit.
 */
#include <stddef.h>

#include "nnrt/kernels/fc_depth.h"

#include "../internal/fc_body.h"
#include "../internal/fc_depth.h"

nnrt_status_t nnrt_fully_connected_s8_depth(const nnrt_fc_s8_params_t *params,
                                            const int8_t *input, const int8_t *weights,
                                            const int32_t *bias, int8_t *output, int32_t *acc,
                                            int32_t k0, int32_t k1, uint32_t flags)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL || acc == NULL
        || NNRT_FC_S8_PARAMS_BAD(params)
        || nnrt_fc_depth_bad(params->batches, params->accum_depth, params->output_depth, k0, k1)) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = k1 - k0;
    const int32_t units = params->output_depth;
    const int32_t in_off = params->input_offset;
    const int32_t w_off = params->weights_offset;
    const int8_t *x = input + k0;

    for (int32_t o = 0; o < units; ++o) {
        const int8_t *w = weights + (size_t)o * (size_t)n;
        int32_t a = (flags & NNRT_FC_DEPTH_FIRST) != 0u ? (bias != NULL ? bias[o] : 0) : acc[o];
        for (int32_t d = 0; d < n; ++d) {
            a += ((int32_t)w[d] + w_off) * ((int32_t)x[d] + in_off);
        }
        acc[o] = a;
    }
    if ((flags & NNRT_FC_DEPTH_LAST) != 0u) {
        const nnrt_fc_outs_t q = nnrt_fc_outs(params, 0);
        for (int32_t o = 0; o < units; ++o) {
            output[o] = nnrt_fc_out(&q, o, acc[o], 0);
        }
    }
    return NNRT_OK;
}
