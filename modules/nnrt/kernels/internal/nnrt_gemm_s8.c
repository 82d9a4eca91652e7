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

NNRT_COLD int nnrt_gemm_s8_stage(const nnrt_gemm_s8_t *g)
{
    return g->act_min == INT8_MIN && g->act_max == INT8_MAX ? 2 : 1;
}

/* The channel pairs of a pixel pair, out of line: the depth loop gets all registers. */
static NNRT_NOINLINE void pair(const nnrt_gemm_pass_t *x, int32_t oc, int32_t n)
{
    nnrt_gemm_pair_body(x->g, x, oc, n, 0);
}

void nnrt_gemm_pairs_rq_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                           int32_t n)
{
    for (; oc < n; oc += 2) {
        nnrt_gemm_pair1_rq(g, x->cols, x->out0, x->out1, oc, oc + 1 < n ? 1 : 0);
    }
}

void nnrt_gemm_s8_2px(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, int8_t *out1)
{
    nnrt_gemm_2px_body(g, cols, out0, out1, pair);
}
