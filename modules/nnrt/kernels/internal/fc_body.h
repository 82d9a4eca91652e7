/*
 * Internal to the nnrt kernels: the body of nnrt_fully_connected_s8() (fc.h) as an
 * inline function, the one source of the generic kernel (run-time parameters) and of
 * the specialised functions code generation emits (nnrt/kernels/spec.h: the same body
 * with the op's `static const` parameters). Three units share each input word
 * (nnrt_dot3_s8(), internal/dot.h); the output stage in the fast requantisation
 * form of internal/requant.h, the reference for shifts outside it.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_BODY_H_
#define NNRT_KERNELS_INTERNAL_FC_BODY_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/fc.h"

#include "dot.h"
#include "requant.h"
#include "simd.h"

/* all_fast: 1 when every shift is known (build time) to take the fast form. Arguments
 * checked by the caller. */
static NNRT_ALWAYS_INLINE void nnrt_fc_body(const nnrt_fc_s8_params_t *params,
                                            const int8_t *input, const int8_t *weights,
                                            const int32_t *bias, int8_t *output, int all_fast)
{
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
                if (all_fast || (uint32_t)e <= 29u) {
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
}

#endif /* NNRT_KERNELS_INTERNAL_FC_BODY_H_ */
