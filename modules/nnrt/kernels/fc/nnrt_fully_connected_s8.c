/*
 * int8 fully connected. Arithmetic of TFLM's reference FullyConnected /
 * FullyConnectedPerChannel (see fc.h). Three units at a time share each input word:
 * on DSP cores SXTAB16 turns 4 inputs into two offset-added int16 pairs once, and per
 * unit one weight word gives two SMLAD (4 MACs); elsewhere the same blocking in
 * portable C (three units: a fourth would not fit the registers). Requantisation
 * once per output (internal/requant.h). Asymmetric per-tensor weights
 * (weights_offset != 0, rare) take a plain loop.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"

#include "../internal/dot.h"
#include "../internal/requant.h"
#include "../cmsis/nnrt_cmsis.h"

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
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_fully_connected_s8(params, input, weights, bias, output)) {
        return NNRT_OK;
    }
#endif
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const int32_t in_off = params->input_offset;
    const int32_t w_off = params->weights_offset;
    const int32_t out_off = params->output_offset;
    const int full = params->act_min == INT8_MIN && params->act_max == INT8_MAX;
    nnrt_rqf_t q;

    for (int32_t b = 0; b < params->batches; ++b, input += depth, output += units) {
        for (int32_t o = 0; o < units; o += 3) {
            const int32_t rows = units - o < 3 ? units - o : 3;
            const int8_t *w = weights + (size_t)o * (size_t)depth;
            int32_t acc[3] = {0, 0, 0};
            for (int32_t r = 0; r < rows; ++r) {
                acc[r] = bias != NULL ? bias[o + r] : 0;
            }
            if (rows == 3 && w_off == 0) {
                nnrt_dot3_s8(input, w, depth, depth, in_off, acc);
            } else {
                for (int32_t r = 0; r < rows; ++r, w += depth) {
                    if (w_off == 0) {
                        acc[r] = nnrt_dot1_s8(input, w, depth, in_off, acc[r]);
                        continue;
                    }
                    for (int32_t d = 0; d < depth; ++d) {
                        acc[r] += ((int32_t)w[d] + w_off) * ((int32_t)input[d] + in_off);
                    }
                }
            }
            for (int32_t r = 0; r < rows; ++r) {
                const int32_t qi = params->per_channel ? o + r : 0;
                const int32_t e = -params->shift[qi] - 2; /* fast form: e' in [0, 29] */
                int32_t v;
                if ((uint32_t)e <= 29u) {
                    v = nnrt_rqf_fast(acc[r], params->multiplier[qi], 1 << e, e + 1) + out_off;
                } else {
                    nnrt_rqf_init(&q, params->multiplier[qi], params->shift[qi]);
                    v = nnrt_rqf(acc[r], &q, out_off);
                }
                v = nnrt_sat8(v);
                if (!full) {
                    v = v < params->act_min ? params->act_min
                                            : (v > params->act_max ? params->act_max : v);
                }
                output[o + r] = (int8_t)v;
            }
        }
    }
    return NNRT_OK;
}
