/*
 * The int8 matrix core of the fast convolutions: 2 pixels x 2 output channels per
 * block, columns pre-converted to int16 with the input offset (see internal/gemm.h).
 * DSP cores: per 4 depth values and block, one word of weights per channel split by
 * SXTB16 into [w0 w2] [w1 w3] and 8 SMLAD (16 MACs). Elsewhere: the same blocking in
 * portable C.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gemm.h"
#include "requant.h"
#include "simd.h"

static inline void st16(uint8_t *base, size_t index, int32_t v)
{
    int16_t h = (int16_t)v;
    memcpy(base + 2 * index, &h, sizeof(h));
}

static inline int32_t ld16(const uint8_t *base, size_t index)
{
    int16_t h;
    memcpy(&h, base + 2 * index, sizeof(h));
    return h;
}

#if NNRT_DSP
/* Halfword index of depth position kk of pixel p in the DSP layout. */
static inline size_t dsp_pos(int32_t k, int32_t p, int32_t kk)
{
    const int32_t kc = k >> 2;
    if (kk < 4 * kc) {
        const int32_t e = kk & 3;
        return (size_t)(8 * (kk >> 2) + 4 * p + (((e & 1) << 1) | (e >> 1)));
    }
    return (size_t)(8 * kc + 4 * p + (kk - 4 * kc));
}
#endif

void nnrt_cols_put_s8(void *cols, int32_t k, int32_t p, int32_t k0, const int8_t *x,
                      int32_t n, int32_t input_offset)
{
    uint8_t *c = (uint8_t *)cols;
    int32_t i = 0;
#if NNRT_DSP
    if ((k0 & 3) == 0) {
        const uint32_t off2 = nnrt_pair16(input_offset);
        const int32_t full = 4 * (k >> 2) - k0; /* depth positions left in whole chunks */
        const int32_t m = (n < full ? n : full) & ~3;
        uint8_t *dst = c + 16 * (size_t)(k0 >> 2) + 8 * (size_t)p;
        for (; i < m; i += 4, dst += 16) {
            const uint32_t v = nnrt_ld32(x + i);
            nnrt_st32(dst, __sxtab16(off2, v));
            nnrt_st32(dst + 4, nnrt_sxtab16_ror8(off2, v));
        }
    }
    for (; i < n; ++i) {
        st16(c, dsp_pos(k, p, k0 + i), (int32_t)x[i] + input_offset);
    }
#else
    int16_t *dst = (int16_t *)cols + (size_t)p * (size_t)k + (size_t)k0;
    (void)c;
    for (; i < n; ++i) {
        dst[i] = (int16_t)((int32_t)x[i] + input_offset);
    }
#endif
}

void nnrt_cols_zero(void *cols, int32_t k, int32_t p, int32_t k0, int32_t n)
{
#if NNRT_DSP
    uint8_t *c = (uint8_t *)cols;
    for (int32_t i = 0; i < n; ++i) {
        st16(c, dsp_pos(k, p, k0 + i), 0);
    }
#else
    int16_t *dst = (int16_t *)cols + (size_t)p * (size_t)k + (size_t)k0;
    for (int32_t i = 0; i < n; ++i) {
        dst[i] = 0;
    }
#endif
}

/*
 * The 2 x 2 accumulators of channels w0 / w1 (rows of the filter) over the columns of
 * both pixels: a[0] = (pixel 0, w0), a[1] = (pixel 1, w0), a[2] = (pixel 0, w1),
 * a[3] = (pixel 1, w1), added to their start values.
 */
static NNRT_ALWAYS_INLINE void mac_2x2(const void *cols, int32_t k, const int8_t *w0, const int8_t *w1,
                           int32_t a[4])
{
    int32_t a00 = a[0];
    int32_t a01 = a[1];
    int32_t a10 = a[2];
    int32_t a11 = a[3];
#if NNRT_DSP
    const int32_t kc = k >> 2;
    const uint8_t *c = (const uint8_t *)cols;
    const uint8_t *c_end = c + 16 * (size_t)kc;
    while (c != c_end) {
        const uint32_t p0a = nnrt_ld32(c);
        const uint32_t p0b = nnrt_ld32(c + 4);
        const uint32_t p1a = nnrt_ld32(c + 8);
        const uint32_t p1b = nnrt_ld32(c + 12);
        uint32_t wv = nnrt_ld32(w0);
        uint32_t we = __sxtb16(wv);
        uint32_t wo = nnrt_sxtb16_ror8(wv);
        c += 16;
        w0 += 4;
        a00 = __smlad(p0a, we, a00);
        a00 = __smlad(p0b, wo, a00);
        a01 = __smlad(p1a, we, a01);
        a01 = __smlad(p1b, wo, a01);
        wv = nnrt_ld32(w1);
        we = __sxtb16(wv);
        wo = nnrt_sxtb16_ror8(wv);
        w1 += 4;
        a10 = __smlad(p0a, we, a10);
        a10 = __smlad(p0b, wo, a10);
        a11 = __smlad(p1a, we, a11);
        a11 = __smlad(p1b, wo, a11);
    }
    for (int32_t t = 0; t < (k & 3); ++t) {
        const int32_t x0 = ld16(c, (size_t)t);
        const int32_t x1 = ld16(c, (size_t)(4 + t));
        a00 += w0[t] * x0;
        a01 += w0[t] * x1;
        a10 += w1[t] * x0;
        a11 += w1[t] * x1;
    }
#else
    const int16_t *x0 = (const int16_t *)cols;
    const int16_t *x1 = x0 + k;
    for (int32_t i = 0; i < k; ++i) {
        const int32_t wa = w0[i];
        const int32_t wb = w1[i];
        a00 += wa * x0[i];
        a01 += wa * x1[i];
        a10 += wb * x0[i];
        a11 += wb * x1[i];
    }
#endif
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

/* Output stages, chosen once per call. */
enum { STAGE_ANY = 0, STAGE_FAST = 1, STAGE_FAST_FULL = 2 };

/* One requantised output of stage `stage`: acc * (m, s) + offset, clamped. */
static NNRT_ALWAYS_INLINE int8_t out_any(int32_t acc, int32_t m, int32_t s, int32_t off,
                                         int32_t lo, int32_t hi)
{
    nnrt_rqf_t q;
    nnrt_rqf_init(&q, m, s, off);
    return nnrt_act8(nnrt_rqf(acc, &q, off), lo, hi);
}

/*
 * Channels [oc, oc + n) (n = 1 or 2) of one pixel pair: outputs o0[i] (pixel 0) and
 * o1[i] (pixel 1); a missing pixel 1 has o1 == o0 and the same columns, so it writes
 * the same values again.
 */
static NNRT_ALWAYS_INLINE void gemm_pair(const nnrt_gemm_s8_t *g, const void *cols,
                                         int32_t oc, int32_t n, int8_t *o0, int8_t *o1,
                                         int stage)
{
    const int32_t k = g->k;
    const int32_t off = g->output_offset;
    const int32_t lo = g->act_min;
    const int32_t hi = g->act_max;
    const int32_t q0 = g->per_channel ? oc : 0;
    const int32_t q1 = g->per_channel ? oc + n - 1 : 0;
    const int8_t *w0 = g->filter + (size_t)oc * (size_t)k;
    int32_t a[4] = {0, 0, 0, 0};
    if (g->bias != NULL) {
        a[0] = a[1] = g->bias[oc];
        a[2] = a[3] = g->bias[oc + n - 1];
    }
    mac_2x2(cols, k, w0, w0 + (size_t)(n - 1) * (size_t)k, a);
    const int32_t m0 = g->multiplier[q0];
    const int32_t s0 = g->shift[q0];
    const int32_t m1 = g->multiplier[q1];
    const int32_t s1 = g->shift[q1];
    if (stage == STAGE_ANY) {
        o0[0] = out_any(a[0], m0, s0, off, lo, hi);
        o1[0] = out_any(a[1], m0, s0, off, lo, hi);
        o0[n - 1] = out_any(a[2], m1, s1, off, lo, hi);
        o1[n - 1] = out_any(a[3], m1, s1, off, lo, hi);
        return;
    }
    /*
     * Fast form for every channel (checked once per call), see requant.h: with
     * e' = e - 2 = -shift - 2 >= 0, the addend 2^(e-2) + offset * 2^(e-1) is
     * (2 * offset + 1) << e', and the shift e - 1 is e' + 1.
     */
    const int32_t c2 = 2 * off + 1;
    const int32_t e0 = -s0 - 2;
    int32_t v00 = nnrt_sat8(nnrt_rqf_fast(a[0], m0, c2 * (1 << e0), e0 + 1));
    int32_t v01 = nnrt_sat8(nnrt_rqf_fast(a[1], m0, c2 * (1 << e0), e0 + 1));
    if (stage == STAGE_FAST) {
        v00 = nnrt_act8(v00, lo, hi);
        v01 = nnrt_act8(v01, lo, hi);
    }
    o0[0] = (int8_t)v00;
    o1[0] = (int8_t)v01;
    const int32_t e1 = -s1 - 2;
    int32_t v10 = nnrt_sat8(nnrt_rqf_fast(a[2], m1, c2 * (1 << e1), e1 + 1));
    int32_t v11 = nnrt_sat8(nnrt_rqf_fast(a[3], m1, c2 * (1 << e1), e1 + 1));
    if (stage == STAGE_FAST) {
        v10 = nnrt_act8(v10, lo, hi);
        v11 = nnrt_act8(v11, lo, hi);
    }
    o0[n - 1] = (int8_t)v10;
    o1[n - 1] = (int8_t)v11;
}

static NNRT_ALWAYS_INLINE void gemm_run(const nnrt_gemm_s8_t *g, const void *cols,
                                        int8_t *out0, int8_t *out1, int stage)
{
    const int32_t pairs = g->oc >> 1;
    for (int32_t i = 0; i < pairs; ++i) {
        gemm_pair(g, cols, 2 * i, 2, out0 + 2 * i, out1 + 2 * i, stage);
    }
    if (g->oc & 1) {
        gemm_pair(g, cols, g->oc - 1, 1, out0 + g->oc - 1, out1 + g->oc - 1, stage);
    }
}

int nnrt_gemm_s8_stage(const nnrt_gemm_s8_t *g)
{
    const int32_t n = g->per_channel ? g->oc : 1;
    for (int32_t i = 0; i < n; ++i) {
        if (g->shift[i] > -2 || g->shift[i] < -23) {
            return STAGE_ANY;
        }
    }
    return g->act_min == INT8_MIN && g->act_max == INT8_MAX ? STAGE_FAST_FULL : STAGE_FAST;
}

void nnrt_gemm_s8_2px(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, int8_t *out1)
{
    if (out1 == NULL) {
        out1 = out0;
    }
    switch (g->stage) {
    case STAGE_FAST_FULL:
        gemm_run(g, cols, out0, out1, STAGE_FAST_FULL);
        break;
    case STAGE_FAST:
        gemm_run(g, cols, out0, out1, STAGE_FAST);
        break;
    default:
        gemm_run(g, cols, out0, out1, STAGE_ANY);
        break;
    }
}
