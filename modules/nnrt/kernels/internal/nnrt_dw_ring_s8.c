/*
 * The 3x3 depthwise ring path of the int8 kernels (dw_ring.h): converting input rows
 * into the ring, and one output row of a group from it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dw_ring.h"

#if NNRT_DW_RING
/* r from q and the output offset; returns 1 when it takes the folded fast form. */
static int ring_rq(const nnrt_rqf_t *q, int32_t out_off, dw_rq_t *r)
{
    r->mult = q->mult;
    if (q->fast) {
        const int64_t add = (int64_t)q->half + (int64_t)out_off * ((int64_t)1 << q->rsh);
        if (add < ((int64_t)1 << 30) && add > -((int64_t)1 << 30)) {
            r->add = (int32_t)add;
            r->rsh = q->rsh;
            return 1;
        }
    }
    r->add = q->shift;
    r->rsh = -1;
    return 0;
}

/* A channel with rsh = -1: the reference requantisation, clamped to int8. */
static NNRT_COLD NNRT_NOINLINE int32_t ring_rq_ref(int32_t acc, const dw_rq_t *r,
                                                   int32_t out_off)
{
    return nnrt_sat8(nnrt_rq_ref(acc, r->mult, r->add, out_off));
}

/* Column j's pairs [x0 x2] (low word) and [x1 x3] (high word) as one 64-bit value. */
static inline uint64_t ring_pairs(uint32_t even, uint32_t odd)
{
    return (uint64_t)even | ((uint64_t)odd << 32);
}

/* 0, hidden from GCC: the zero stores below stay stores instead of memset() calls
 * (a call per border column costs more than the column). */
static inline uint64_t ring_zero(void)
{
    uint32_t lo = 0;
    uint32_t hi = 0;
    __asm__("" : "+r"(lo), "+r"(hi));
    return ring_pairs(lo, hi);
}

/* The ring columns of strip st inside the input's width: [lo, hi). */
static inline void ring_span(const nnrt_conv_geom_t *g, const ring_strip_t *st, int32_t *lo,
                             int32_t *hi)
{
    const int32_t l = st->x0 < 0 ? -st->x0 : 0;
    const int32_t h = g->input_w - st->x0;
    *lo = l < st->cols ? l : st->cols;
    *hi = h < st->cols ? h : st->cols;
    *hi = *hi > *lo ? *hi : *lo;
}

/* The border columns of ring row `row` (outside the input's width): zero pairs for the
 * whole strip (ring_fill() writes only the columns inside). */
static void ring_borders(uint64_t *row, const nnrt_conv_geom_t *g, const ring_strip_t *st)
{
    int32_t lo;
    int32_t hi;
    ring_span(g, st, &lo, &hi);
    const uint64_t z = ring_zero();
    for (int32_t j = 0; j < lo; ++j) {
        row[j] = z;
    }
    for (int32_t j = hi; j < st->cols; ++j) {
        row[j] = z;
    }
}

/* Row `in_row` of the group (its input column 0; NULL: a row outside the input, all
 * zeros) into the columns of ring row `row` inside the input. */
static void ring_fill(uint64_t *row, const int8_t *in_row, const nnrt_conv_geom_t *g,
                      const ring_strip_t *st, uint32_t off2)
{
    int32_t lo;
    int32_t hi;
    ring_span(g, st, &lo, &hi);
    if (in_row == NULL) {
        const uint64_t z = ring_zero();
        for (int32_t j = lo; j < hi; ++j) {
            row[j] = z;
        }
        return;
    }
    const size_t c = (size_t)g->input_c;
    const int8_t *src = in_row + (ptrdiff_t)(st->x0 + lo) * (ptrdiff_t)c;
    if (g->filter_c != 1) {
        /* 4 output channels of one input channel: its value in all four halves */
        for (int32_t j = lo; j < hi; ++j, src += c) {
            const uint32_t v = *(const uint8_t *)src;
            const uint32_t xx = __sxtab16(off2, v | (v << 16));
            row[j] = ring_pairs(xx, xx);
        }
        return;
    }
    for (int32_t j = lo; j < hi; ++j, src += c) {
        const uint32_t v = nnrt_ld32(src);
        row[j] = ring_pairs(__sxtab16(off2, v), nnrt_sxtab16_ror8(off2, v));
    }
}

/*
 * One tap of the ring path: column pairs p[j] and weight pairs wx[t], one LDRD each,
 * four SMLABB / SMLATT. In assembly because GCC splits the 64-bit loads into single
 * words (and hoists and spills the loop-invariant weights one word at a time).
 */
#define RING_TAP(p, j, t)                                                                     \
    do {                                                                                      \
        uint32_t xe_;                                                                         \
        uint32_t xo_;                                                                         \
        uint32_t we_;                                                                         \
        uint32_t wo_;                                                                         \
        __asm__("ldrd %[xe], %[xo], [%[pp], #%c[po]]\n\t"                                     \
                "ldrd %[we], %[wo], [%[wp], #%c[wof]]\n\t"                                    \
                "smlabb %[a0], %[xe], %[we], %[a0]\n\t"                                       \
                "smlatt %[a2], %[xe], %[we], %[a2]\n\t"                                       \
                "smlabb %[a1], %[xo], %[wo], %[a1]\n\t"                                       \
                "smlatt %[a3], %[xo], %[wo], %[a3]"                                           \
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),                 \
                  [xe] "=&r"(xe_), [xo] "=&r"(xo_), [we] "=&r"(we_), [wo] "=&r"(wo_)          \
                : [pp] "r"(p), [wp] "r"(wx), [po] "n"(8 * (j)), [wof] "n"(8 * (t)),           \
                  "m"(*(const uint64_t(*)[3])(const void *)(p)),                              \
                  "m"(*(const uint64_t(*)[9])(const void *)(wx)));                            \
    } while (0)

/* nnrt_sat8(nnrt_rqf_fast(acc, r->mult, r->add, r->rsh)) (requant.h) with the start
 * value in one EOR from the sign (k40 = 0x40000000 in a register). */
static inline int32_t ring_rq1(int32_t acc, const dw_rq_t *r, uint32_t k40)
{
    uint32_t lo;
    int32_t hi;
    __asm__("asr %[hi], %[acc], #31\n\t"
            "eor %[lo], %[k], %[hi], lsl #31\n\t"
            "smlal %[lo], %[hi], %[acc], %[m]\n\t"
            "add %[hi], %[hi], %[add]\n\t"
            "asr %[hi], %[hi], %[rsh]\n\t"
            "ssat %[hi], #8, %[hi]"
            : [hi] "=&r"(hi), [lo] "=&r"(lo)
            : [acc] "r"(acc), [k] "r"(k40), [m] "r"(r->mult), [add] "r"(r->add),
              [rsh] "r"(r->rsh));
    return hi;
}

/* Channel i's output: the fast form, or (mixed groups only) the reference. */
#define RING_OUT(acc, i)                                                                      \
    (mixed && rq[i].rsh < 0 ? ring_rq_ref(acc, &rq[i], kc->out_off)                           \
                            : ring_rq1(acc, &rq[i], k40))

/* One output row of the group from ring rows p0, p1, p2 (its window rows). Constants at
 * each call: full, the activation range is all of int8 (bytes stored as they are);
 * mixed, some channel of the group is outside the fast form (then full is 0). */
static NNRT_ALWAYS_INLINE void ring_row(const uint64_t *p0, const uint64_t *p1,
                                        const uint64_t *p2, int8_t *out, int32_t n,
                                        size_t step, size_t oc_n, const ring_k_t *kc, int full,
                                        int mixed, uint32_t lo4, uint32_t hi4)
{
    const uint64_t *wx = kc->wx;
    const dw_rq_t *rq = kc->rq;
    const uint32_t k40 = 0x40000000u;
    for (int32_t i = 0; i < n; ++i, p0 += step, p1 += step, p2 += step, out += oc_n) {
        int32_t a0;
        int32_t a1;
        int32_t a2;
        int32_t a3;
        __asm__("ldrd %[a0], %[a1], [%[b]]\n\t"
                "ldrd %[a2], %[a3], [%[b], #8]"
                : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=r"(a2), [a3] "=r"(a3)
                : [b] "r"(kc->b), "m"(*(const int32_t(*)[4])kc->b));
        RING_TAP(p0, 0, 0);
        RING_TAP(p0, 1, 1);
        RING_TAP(p0, 2, 2);
        RING_TAP(p1, 0, 3);
        RING_TAP(p1, 1, 4);
        RING_TAP(p1, 2, 5);
        RING_TAP(p2, 0, 6);
        RING_TAP(p2, 1, 7);
        RING_TAP(p2, 2, 8);
        const int32_t v0 = RING_OUT(a0, 0);
        const int32_t v1 = RING_OUT(a1, 1);
        const int32_t v2 = RING_OUT(a2, 2);
        const int32_t v3 = RING_OUT(a3, 3);
        if (full) {
            out[0] = (int8_t)v0;
            out[1] = (int8_t)v1;
            out[2] = (int8_t)v2;
            out[3] = (int8_t)v3;
            continue;
        }
        /* [v0 v2] and [v1 v3] as halfwords (PKHBT), their low bytes interleaved */
        const uint32_t v02 = ((uint32_t)v0 & 0xFFFFu) | ((uint32_t)v2 << 16);
        const uint32_t v13 = ((uint32_t)v1 & 0xFFFFu) | ((uint32_t)v3 << 16);
        uint32_t word = __uxtb16(v02) | (__uxtb16(v13) << 8);
        /* per byte: max with lo, then min with hi (GE flags of SSUB8 select) */
        (void)__ssub8((int32_t)word, (int32_t)lo4);
        word = __sel(word, lo4);
        (void)__ssub8((int32_t)hi4, (int32_t)word);
        word = __sel(word, hi4);
        nnrt_st32(out, word);
    }
}

int nnrt_dw_ring_fits(const nnrt_conv_geom_t *g)
{
    return g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1 && g->dilation_w == 1
           && g->pad_left >= 0 && g->pad_top >= 0 && g->pad_top <= 2;
}

void nnrt_dw_ring_init(nnrt_dw_ring_t *r, const uint32_t wx[18], const int32_t b[4],
                       const nnrt_rqf_t q[4], int32_t in_off, int32_t out_off, int32_t act_lo,
                       int32_t act_hi)
{
    for (int32_t t = 0; t < 9; ++t) {
        r->kc.wx[t] = ring_pairs(wx[2 * t], wx[2 * t + 1]);
    }
    memcpy(r->kc.b, b, sizeof(r->kc.b));
    r->mixed = 0;
    for (int32_t i = 0; i < 4; ++i) {
        r->mixed |= !ring_rq(&q[i], out_off, &r->kc.rq[i]);
    }
    r->kc.out_off = out_off;
    r->off2 = nnrt_pair16(in_off);
    r->full = act_lo == INT8_MIN && act_hi == INT8_MAX;
    r->lo4 = ((uint32_t)act_lo & 0xFFu) * 0x01010101u;
    r->hi4 = ((uint32_t)act_hi & 0xFFu) * 0x01010101u;
}

void nnrt_dw_ring_strip(nnrt_dw_ring_t *r, const nnrt_conv_geom_t *g, int32_t ox0, int32_t n)
{
    r->st.x0 = ox0 * g->stride_w - g->pad_left;
    r->st.cols = (n - 1) * g->stride_w + 3;
    r->n = n;
    for (int32_t i = 0; i < 3; ++i) {
        ring_borders(r->rows[i], g, &r->st);
        r->held[i] = INT32_MIN;
    }
}

void nnrt_dw_ring_rows(nnrt_dw_ring_t *r, const nnrt_conv_geom_t *g, const int8_t *in_b,
                       int32_t oy, int32_t rows, int8_t *out, size_t out_rs, size_t oc_n)
{
    const size_t c = (size_t)g->input_c;
    const size_t in_rs = (size_t)g->input_w * c;
    const size_t step = (size_t)g->stride_w;
    const int32_t n = r->n;
    for (const int32_t end = oy + rows; oy < end; ++oy, out += out_rs) {
        const int32_t y0 = oy * g->stride_h - g->pad_top;
        const uint64_t *w[3];
        /* Input row y (y >= -2: pad_top <= 2) lives in ring row (y + 3) % 3 (three
         * consecutive rows never collide). */
        for (int32_t i = 0; i < 3; ++i) {
            const int32_t y = y0 + i;
            const int32_t s = (int32_t)((uint32_t)(y + 3) % 3u);
            if (r->held[s] != y) {
                const int inside = y >= 0 && y < g->input_h;
                ring_fill(r->rows[s], inside ? in_b + (size_t)y * in_rs : NULL, g, &r->st,
                          r->off2);
                r->held[s] = y;
            }
            w[i] = r->rows[s];
        }
        if (r->mixed) {
            ring_row(w[0], w[1], w[2], out, n, step, oc_n, &r->kc, 0, 1, r->lo4, r->hi4);
        } else if (r->full) {
            ring_row(w[0], w[1], w[2], out, n, step, oc_n, &r->kc, 1, 0, r->lo4, r->hi4);
        } else {
            ring_row(w[0], w[1], w[2], out, n, step, oc_n, &r->kc, 0, 0, r->lo4, r->hi4);
        }
    }
}
#endif /* NNRT_DW_RING */
