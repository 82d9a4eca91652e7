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

#if NNRT_DSP && !NNRT_MVE
/* Channels oc and oc + d (d = 1; 0: an odd last channel) of a lone pixel (pixel 1
 * repeating pixel 0, nnrt_gemm_2px_body()), row-major weights: pixel 0's sums alone,
 * as nnrt_gemm_mac_2x2() computes them (per chunk the columns' two words, one weight
 * word per row split by SXTB16, 4 SMLAD; the K % 4 tail as MLAs), two outputs. */
static void lone_rq(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc, int32_t d)
{
    const int32_t k = g->k;
    const int32_t oc1 = oc + d;
    const uint8_t *c = (const uint8_t *)x->cols;
    const int8_t *w0 = g->filter + (size_t)oc * (size_t)k;
    const int8_t *w1 = w0 + (size_t)d * (size_t)k;
    int32_t a0 = nnrt_gemm_rq_bias(g->rq, oc);
    int32_t a1 = nnrt_gemm_rq_bias(g->rq, oc1);
    for (int32_t j = 0; j < (k >> 2); ++j, c += 16, w0 += 4, w1 += 4) {
        const uint32_t x0 = nnrt_ld32(c);
        const uint32_t x1 = nnrt_ld32(c + 4);
        const uint32_t v0 = nnrt_ld32(w0);
        const uint32_t v1 = nnrt_ld32(w1);
        a0 = __smlad(x1, nnrt_sxtb16_ror8(v0), __smlad(x0, __sxtb16(v0), a0));
        a1 = __smlad(x1, nnrt_sxtb16_ror8(v1), __smlad(x0, __sxtb16(v1), a1));
    }
    for (int32_t t = 0; t < (k & 3); ++t) { /* the partial last chunk */
        const int32_t x0 = nnrt_gemm_ld16(c, nnrt_gemm_dsp_pos(0, t));
        a0 += w0[t] * x0;
        a1 += w1[t] * x0;
    }
    const int32_t v0 = nnrt_gemm_rq_out(a0, nnrt_gemm_rq_ch(g->rq, oc));
    const int32_t v1 = nnrt_gemm_rq_out(a1, nnrt_gemm_rq_ch(g->rq, oc1));
    nnrt_gemm_put4(g, v0, v0, v1, v1, x->out0, x->out0, oc, oc1);
}
#endif

void nnrt_gemm_pairs_rq_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                           int32_t n)
{
#if NNRT_DSP && !NNRT_MVE
    if (x->out1 == x->out0) { /* a lone pixel: its sums alone */
        for (; oc < n; oc += 2) {
            lone_rq(g, x, oc, oc + 1 < n ? 1 : 0);
        }
        return;
    }
#endif
    for (; oc < n; oc += 2) {
        nnrt_gemm_pair1_rq(g, x->cols, x->out0, x->out1, oc, oc + 1 < n ? 1 : 0);
    }
}

/* The pair (oc, oc + 1) of a pixel pair from the pair-row layout (gemm_body.h). */
static void rp_pair(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc)
{
    const int32_t k = g->k;
    const int8_t *w = g->filter + (size_t)oc * (size_t)k;
    const int32_t b0 = nnrt_gemm_rq_bias(g->rq, oc);
    int32_t a[4];
#if NNRT_DSP && !NNRT_MVE
    /* the assembly's sums in C: per chunk both words raw (mixed sums), then SXTB16 */
    const uint8_t *c = (const uint8_t *)x->cols;
    uint32_t m0 = (uint32_t)nnrt_gemm_rq_bias(g->rq, oc + 1);
    int32_t a0 = b0;
    if (x->out1 == x->out0) {
        /* a lone pixel (pixel 1 repeats pixel 0, nnrt_gemm_2px_body()): its sums alone,
         * half the loads and multiplies (the 3x3 maps' ninth pixel: person_detect
         * 246 K -> measured in benchmarks/README-kernels.md) */
        for (int32_t j = 0; j < (k >> 2); ++j, c += 16, w += 8) {
            const uint32_t x0 = nnrt_ld32(c);
            const uint32_t x1 = nnrt_ld32(c + 4);
            const uint32_t we = nnrt_ld32(w);
            const uint32_t wo = nnrt_ld32(w + 4);
            m0 = (uint32_t)__smlad(x1, wo, __smlad(x0, we, (int32_t)m0));
            a0 = __smlad(x1, __sxtb16(wo), __smlad(x0, __sxtb16(we), a0));
        }
        /* two outputs requantised, each stored twice (out1 == out0) */
        const int32_t v0 = nnrt_gemm_rq_out(a0, nnrt_gemm_rq_ch(g->rq, oc));
        const int32_t v1 =
            nnrt_gemm_rq_out((int32_t)(m0 - (uint32_t)a0) >> 8, nnrt_gemm_rq_ch(g->rq, oc + 1));
        nnrt_gemm_put4(g, v0, v0, v1, v1, x->out0, x->out0, oc, oc + 1);
        return;
    } else {
        uint32_t m1 = m0;
        int32_t a1 = b0;
        for (int32_t j = 0; j < (k >> 2); ++j, c += 16, w += 8) {
            const uint32_t x0 = nnrt_ld32(c);
            const uint32_t x1 = nnrt_ld32(c + 4);
            const uint32_t x2 = nnrt_ld32(c + 8);
            const uint32_t x3 = nnrt_ld32(c + 12);
            const uint32_t we = nnrt_ld32(w);
            const uint32_t wo = nnrt_ld32(w + 4);
            m0 = (uint32_t)__smlad(x1, wo, __smlad(x0, we, (int32_t)m0));
            m1 = (uint32_t)__smlad(x3, wo, __smlad(x2, we, (int32_t)m1));
            a0 = __smlad(x1, __sxtb16(wo), __smlad(x0, __sxtb16(we), a0));
            a1 = __smlad(x3, __sxtb16(wo), __smlad(x2, __sxtb16(we), a1));
        }
        a[0] = a0;
        a[1] = a1;
        a[2] = (int32_t)(m0 - (uint32_t)a0) >> 8;
        a[3] = (int32_t)(m1 - (uint32_t)a1) >> 8;
    }
#else
    /* other builds: the pair's two rows unpacked (w_a the halfword's low byte, w_b
     * (h - w_a) / 256), then the build's own 2 x 2 block */
    int8_t rows[2][NNRT_GEMM_RP_MAX_K];
    for (int32_t i = 0; i < k; ++i) {
        const int8_t *p = w + 8 * (i >> 2) + 4 * (i & 1) + 2 * ((i >> 1) & 1);
        const int32_t h = (int32_t)(int16_t)((uint16_t)(uint8_t)p[0]
                                              | ((uint16_t)(uint8_t)p[1] << 8));
        rows[0][i] = p[0];
        rows[1][i] = (int8_t)((h - p[0]) >> 8);
    }
    /* channel b's bias: the second bias word less the first, over 256 (|bias_b| < 2^23) */
    const int32_t b1 =
        (int32_t)((uint32_t)nnrt_gemm_rq_bias(g->rq, oc + 1) - (uint32_t)b0) >> 8;
    a[0] = a[1] = b0;
    a[2] = a[3] = b1;
    nnrt_gemm_mac_2x2(x->cols, k, rows[0], rows[1], a);
#endif
    const int32_t *r0 = nnrt_gemm_rq_ch(g->rq, oc);
    const int32_t *r1 = nnrt_gemm_rq_ch(g->rq, oc + 1);
    nnrt_gemm_put4(g, nnrt_gemm_rq_out(a[0], r0), nnrt_gemm_rq_out(a[1], r0),
                   nnrt_gemm_rq_out(a[2], r1), nnrt_gemm_rq_out(a[3], r1), x->out0, x->out1,
                   oc, oc + 1);
}

void nnrt_gemm_pairs_rp_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                           int32_t n)
{
    for (; oc + 1 < n; oc += 2) {
        rp_pair(g, x, oc);
    }
    if (oc < n) { /* an odd last channel: a row-major row */
        nnrt_gemm_pair1_rq(g, x->cols, x->out0, x->out1, oc, 0);
    }
}

/* Channel c of the int16 layout's blocks of 3 (gemm_body.h): the byte offset of its
 * first chunk's E word in the weights, the bytes a chunk of its block takes, and its
 * record words (bias, then multiplier, addend and rsh). */
typedef struct {
    const uint8_t *w;
    size_t step;
    int32_t bias;
    const int32_t *rec;
} w16_ch_t;

static w16_ch_t w16_ch(const nnrt_gemm_s8_t *g, int32_t c)
{
    const int32_t b = c / 3;
    const int32_t r = c - 3 * b;
    const int32_t left = g->oc - 3 * b;
    const int32_t gsz = left < 3 ? left : 3;
    const int32_t *rq = g->rq + 12 * b;
    w16_ch_t ch = {(const uint8_t *)g->filter + 6 * (size_t)b * (size_t)g->k + 8 * (size_t)r,
                   8 * (size_t)gsz, rq[r], rq + gsz + 3 * r};
    return ch;
}

#if NNRT_DSP && !NNRT_MVE
/* One channel's sums over both pixels' columns, per chunk its E and O words and 4
 * SMLAD (the assembly's sums). */
static NNRT_ALWAYS_INLINE void w16_sums(const uint8_t *cp, const w16_ch_t *ch, int32_t k,
                                        int32_t *s0, int32_t *s1)
{
    const uint8_t *w = ch->w;
    int32_t a0 = ch->bias;
    int32_t a1 = ch->bias;
    for (int32_t j = k >> 2; j > 0; --j, cp += 16, w += ch->step) {
        const uint32_t we = nnrt_ld32(w);
        const uint32_t wo = nnrt_ld32(w + 4);
        a0 = __smlad(nnrt_ld32(cp + 4), wo, __smlad(nnrt_ld32(cp), we, a0));
        a1 = __smlad(nnrt_ld32(cp + 12), wo, __smlad(nnrt_ld32(cp + 8), we, a1));
    }
    *s0 = a0;
    *s1 = a1;
}
#endif

/* Channels c and c + d (d = 1; 0: one channel) of a pixel pair from the int16 layout. */
static void w16_pair(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t c, int32_t d)
{
    const int32_t k = g->k;
    const w16_ch_t c0 = w16_ch(g, c);
    const w16_ch_t c1 = w16_ch(g, c + d);
    int32_t a[4] = {c0.bias, c0.bias, c1.bias, c1.bias};
#if NNRT_DSP && !NNRT_MVE
    if (x->out1 == x->out0) {
        /* a lone pixel (pixel 1 repeats pixel 0, nnrt_gemm_2px_body()): pixel 0 alone,
         * both channels per chunk (its column words loaded once) */
        const uint8_t *cp = (const uint8_t *)x->cols;
        const uint8_t *w0 = c0.w;
        const uint8_t *w1 = c1.w;
        for (int32_t j = k >> 2; j > 0; --j, cp += 16, w0 += c0.step, w1 += c1.step) {
            const uint32_t x0 = nnrt_ld32(cp);
            const uint32_t x1 = nnrt_ld32(cp + 4);
            a[0] = __smlad(x1, nnrt_ld32(w0 + 4), __smlad(x0, nnrt_ld32(w0), a[0]));
            a[2] = __smlad(x1, nnrt_ld32(w1 + 4), __smlad(x0, nnrt_ld32(w1), a[2]));
        }
        a[1] = a[0];
        a[3] = a[2];
    } else {
        /* both pixels, one channel at a time (GCC keeps its loop in registers; the
         * assembly takes every stored pair of 3 channels or more) */
        w16_sums((const uint8_t *)x->cols, &c0, k, &a[0], &a[1]);
        w16_sums((const uint8_t *)x->cols, &c1, k, &a[2], &a[3]);
    }
#else
    /* other builds: the two rows unpacked to int8 (each halfword a widened int8), then
     * the build's own 2 x 2 block */
    int8_t rows[2][NNRT_GEMM_RP_MAX_K];
    const w16_ch_t *chs[2] = {&c0, &c1};
    for (int32_t r = 0; r < 2; ++r) {
        for (int32_t i = 0; i < k; ++i) {
            /* chunk i / 4, word (i & 1): E / O, half (i >> 1) & 1 */
            const size_t h = chs[r]->step / 2 * (size_t)(i >> 2) + 2 * (size_t)(i & 1)
                             + (size_t)((i >> 1) & 1);
            rows[r][i] = (int8_t)nnrt_gemm_ld16(chs[r]->w, h);
        }
    }
    nnrt_gemm_mac_2x2(x->cols, k, rows[0], rows[1], a);
#endif
    nnrt_gemm_put4(g, nnrt_gemm_rq_out(a[0], c0.rec), nnrt_gemm_rq_out(a[1], c0.rec),
                   nnrt_gemm_rq_out(a[2], c1.rec), nnrt_gemm_rq_out(a[3], c1.rec), x->out0,
                   x->out1, c, c + d);
}

void nnrt_gemm_pairs_w16_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                            int32_t n)
{
    for (; oc + 1 < n; oc += 2) {
        w16_pair(g, x, oc, 1);
    }
    if (oc < n) {
        w16_pair(g, x, oc, 0);
    }
}

void nnrt_gemm_s8_2px(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, int8_t *out1)
{
    nnrt_gemm_2px_body(g, cols, out0, out1, pair);
}
