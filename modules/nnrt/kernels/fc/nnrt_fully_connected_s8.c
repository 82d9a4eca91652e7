/*
 * int8 fully connected. Arithmetic of TFLM's reference FullyConnected /
 * FullyConnectedPerChannel (see fc.h); the requantisation parameters of a unit are
 * loaded once per unit, outside the dot product.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/quant.h"

nnrt_status_t nnrt_fully_connected_s8(const nnrt_fc_s8_params_t *params, const int8_t *input,
                                      const int8_t *weights, const int32_t *bias,
                                      int8_t *output)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL
        || params->multiplier == NULL || params->shift == NULL || params->batches < 1
        || params->accum_depth < 1 || params->output_depth < 1
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max || params->output_offset < INT8_MIN
        || params->output_offset > INT8_MAX || params->input_offset < -INT8_MAX
        || params->input_offset > INT8_MAX + 1 || params->weights_offset < -INT8_MAX
        || params->weights_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const int32_t in_off = params->input_offset;
    const int32_t w_off = params->weights_offset;
    const int32_t out_off = params->output_offset;

    for (int32_t b = 0; b < params->batches; ++b) {
        const int8_t *x = input + (size_t)b * (size_t)depth;
        for (int32_t o = 0; o < units; ++o) {
            const int8_t *w = weights + (size_t)o * (size_t)depth;
            int32_t acc = 0;
            for (int32_t d = 0; d < depth; ++d) {
                acc += ((int32_t)w[d] + w_off) * ((int32_t)x[d] + in_off);
            }
            if (bias != NULL) {
                acc += bias[o];
            }
            const int32_t qi = params->per_channel ? o : 0;
            acc = nnrt_multiply_by_quantized_multiplier(acc, params->multiplier[qi],
                                                        params->shift[qi]);
            output[o] = (int8_t)nnrt_clamp_i32(acc + out_off, params->act_min, params->act_max);
        }
        output += units;
    }
    return NNRT_OK;
}
