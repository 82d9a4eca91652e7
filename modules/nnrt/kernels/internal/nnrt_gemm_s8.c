/*
 * The int8 matrix core of the fast convolutions: 2 pixels x 2 output channels per
 * block, columns pre-converted to int16 with the input offset (see internal/gemm.h).
 * DSP cores: per 4 depth values and block, one word of weights per channel split by
 * SXTB16 into [w0 w2] [w1 w3] and 8 SMLAD (16 MACs). Elsewhere: the same blocking in
 * portable C. The bodies live in internal/gemm_body.h (shared with the specialised
 * functions code generation emits); this file instantiates them with run-time values.
 */
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "gemm_body.h"
#include "requant.h"
#include "simd.h"

void nnrt_cols_put_s8(void *cols, int32_t k, int32_t p, int32_t k0, const int8_t *x,
                      int32_t n, int32_t input_offset)
{
    nnrt_cols_put_body(cols, k, p, k0, x, n, input_offset);
}

NNRT_COLD NNRT_NOINLINE void nnrt_gemm_pair_ref(const nnrt_gemm_s8_t *g, int32_t oc, int32_t d,
                                                int32_t a00, int32_t a01, int32_t a10,
                                                int32_t a11, int8_t *out0, int8_t *out1)
{
    const int32_t a[4] = {a00, a01, a10, a11};
    for (int32_t i = 0; i <= d; ++i) {
        const int32_t qi = g->per_channel ? oc + i : 0;
        const int32_t m = g->multiplier[qi];
        const int32_t s = g->shift[qi];
        const int32_t v0 = nnrt_rq_ref(a[2 * i], m, s, g->output_offset);
        const int32_t v1 = nnrt_rq_ref(a[2 * i + 1], m, s, g->output_offset);
        out0[oc + i] = nnrt_act8(v0, g->act_min, g->act_max);
        out1[oc + i] = nnrt_act8(v1, g->act_min, g->act_max);
    }
}

NNRT_COLD int nnrt_gemm_s8_stage(const nnrt_gemm_s8_t *g)
{
    return g->act_min == INT8_MIN && g->act_max == INT8_MAX ? 2 : 1;
}

/* The channel pairs of a pixel pair, out of line: the depth loop gets all registers. */
static NNRT_NOINLINE void pair(const nnrt_gemm_pass_t *x, int32_t oc, int32_t n)
{
    nnrt_gemm_pair_body(x->g, x, oc, n, 0);
}

void nnrt_gemm_s8_2px(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, int8_t *out1)
{
    nnrt_gemm_2px_body(g, cols, out0, out1, pair);
}
