/*
 * int16 x int8 fully connected (16x8 quantisation, fc.h): per row and unit the 64-bit
 * sum of (w + weights_offset) * x, the int64 bias, TFLM's 64-bit requantisation and the
 * activation clamp. |(w + offset) * x| <= 2^23, so runs of 255 products sum exactly in
 * 32 bits.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/quant.h"

nnrt_status_t nnrt_fully_connected_s16(const nnrt_fc_s16_params_t *params, const int16_t *input,
                                       const int8_t *weights, const int64_t *bias,
                                       int16_t *output)
{
    if (input == NULL || weights == NULL || output == NULL
        || nnrt_fc_s16_check(params) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const int32_t depth = params->accum_depth;
    const int32_t w_off = params->weights_offset;
    for (int32_t b = 0; b < params->batches; ++b) {
        const int16_t *x = input + (size_t)b * (size_t)depth;
        for (int32_t o = 0; o < params->output_depth; ++o) {
            const int8_t *w = weights + (size_t)o * (size_t)depth;
            int64_t acc = 0;
            for (int32_t d0 = 0; d0 < depth; d0 += 255) {
                const int32_t d1 = depth - d0 < 255 ? depth : d0 + 255;
                int32_t part = 0;
                for (int32_t d = d0; d < d1; ++d) {
                    part += ((int32_t)w[d] + w_off) * (int32_t)x[d];
                }
                acc += part;
            }
            if (bias != NULL) {
                acc += bias[o];
            }
            const int32_t j = params->per_channel ? o : 0;
            const int32_t v = nnrt_multiply_by_quantized_multiplier_s64(
                acc, params->multiplier[j], params->shift[j]);
            *output++ = (int16_t)nnrt_clamp_i32(v, params->act_min, params->act_max);
        }
    }
    return NNRT_OK;
}
