/*
 * The plane path of the int8 depthwise kernels (dw_plane.h): the view, per-channel
 * constants, the ring of converted input lines, and the line loop in assembly.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dw_plane.h"

#if NNRT_DW_PLANE
/* Words of a plane line for n outputs: its int16 values, even, with room for the pair
 * the kernels load past the last window. */
static int32_t line_words(const nnrt_dwp_view_t *v, int32_t n)
{
    return ((n - 1) * v->s + v->kw + 2) / 2;
}

/* Estimated instructions of one output line of n outputs in the 3x3 assembly. */
static int32_t line_cost(int32_t n)
{
    return 20 + 60 * (n / 4) + 16 * (n & 2) + 21 * (n & 1);
}

/* The view of g along rows (transposed 0) or columns. */
static void view_along(nnrt_dwp_view_t *v, const nnrt_conv_geom_t *g, int transposed)
{
    const int32_t c = g->input_c;
    const int32_t oc = g->output_c;
    /* per axis [rows, columns]: the view's lines run across one, along the other */
    const int32_t out[2] = {g->output_h, g->output_w};
    const int32_t in[2] = {g->input_h, g->input_w};
    const int32_t stride[2] = {g->stride_h, g->stride_w};
    const int32_t filt[2] = {g->filter_h, g->filter_w};
    const int32_t pad[2] = {g->pad_top, g->pad_left};
    const int32_t in_step[2] = {g->input_w * c, c};      /* input bytes per row, column */
    const int32_t out_step[2] = {g->output_w * oc, oc};
    const int32_t f_step[2] = {g->filter_w * oc, oc};   /* filter bytes */
    const int along = !transposed;
    const int across = transposed;
    v->transposed = transposed;
    v->n = out[along];
    v->lines = out[across];
    v->s = stride[along];
    v->sl = stride[across];
    v->kw = filt[along];
    v->kh = filt[across];
    v->pad = pad[along];
    v->len = in[along];
    v->first = -pad[across];
    v->count = in[across];
    v->step = in_step[along];
    v->line = in_step[across];
    v->out_step = out_step[along];
    v->out_line = out_step[across];
    v->f_along = f_step[along];
    v->f_across = f_step[across];
    v->asm3 = v->kh == 3 && v->kw == 3;
}

/* Words of one channel's constants on the generic path (per filter line: pairs
 * [E0 O0 E1 O1 ...] at stride 1, [E0 E1 ...] at stride 2; see gen_channel()). */
static int32_t gen_words(const nnrt_dwp_view_t *v)
{
    return v->kh * (v->s == 1 ? 2 * (v->kw / 2 + 1) : (v->kw + 1) / 2);
}

int nnrt_dwp_view(nnrt_dwp_view_t *v, const nnrt_conv_geom_t *g, int allow_transposed)
{
    if (g->dilation_h != 1 || g->dilation_w != 1) {
        return 0;
    }
    const int rows = g->stride_w <= 2;
    const int cols = allow_transposed && g->stride_h <= 2;
    int transposed;
    if (g->filter_h == 3 && g->filter_w == 3) {
        transposed = cols && (!rows || (int64_t)g->output_w * line_cost(g->output_h)
                                           < (int64_t)g->output_h * line_cost(g->output_w));
    } else {
        /* pairs along rows, unless the filter is one column */
        transposed = cols && (!rows || (g->filter_w == 1 && g->filter_h > 1));
    }
    if (!rows && !transposed) {
        return 0;
    }
    view_along(v, g, transposed);
    return v->kh <= NNRT_DWP_MAX_K && v->kw <= NNRT_DWP_MAX_K
           && (v->asm3 || gen_words(v) <= NNRT_DWP_GEN_WORDS) && nnrt_dwp_per_strip(v, 1) > 0;
}

int32_t nnrt_dwp_per_strip(const nnrt_dwp_view_t *v, int32_t planes)
{
    /* the most words a line may have (kh lines of every plane), then its outputs */
    const int32_t w = NNRT_DWP_WORDS / (v->kh * planes);
    const int32_t n = (2 * w - v->kw - 2) / v->s + 1;
    return n > 0 ? n : 0;
}

/* Channel oc's output stage (mae: multiplier, addend, shift) and its doubled start
 * value from s2 = 2 * sum(w) over `taps` taps into b[0, nb); 0, and zeros, when it is
 * outside the plane path's requantisation. */
static NNRT_NOINLINE int channel_rq(int32_t *b, int32_t nb, int32_t *mae,
                                    const nnrt_conv_s8_params_t *p, const int32_t *bias,
                                    int32_t oc, int32_t s2, int32_t taps)
{
    const int32_t qi = p->per_channel ? oc : 0;
    const int32_t mult = p->multiplier[qi];
    const int32_t e = mult == 0 ? 1 : -p->shift[qi]; /* multiplier 0: the offset, any shift */
    const int32_t bv = bias != NULL ? bias[oc] : 0;
    /* |acc| <= |b| + taps * 128 * 256 < 2^30: its double is exact; for e <= 22 the
     * addend is below 2^30 for any output offset (|offset| <= 128) */
    const int32_t room = (1 << 30) - taps * 32768;
    const int ok = e >= 1 && e <= 22 && bv < room && bv > -room;
    mae[0] = ok ? mult : 0;
    mae[1] = ok ? (1 << (e - 1)) + p->output_offset * (1 << e) : 0;
    mae[2] = ok ? e : 1;
    const int32_t b2 = ok ? 2 * bv + p->input_offset * s2 : 0;
    b[0] = b2;
    for (int32_t i = 1; i < nb; ++i) {
        b[i] = b2;
    }
    return ok;
}

int nnrt_dwp_all_fast(const nnrt_conv_s8_params_t *p, const int32_t *bias)
{
    const nnrt_conv_geom_t *g = &p->geom;
    int32_t b;
    int32_t mae[3];
    for (int32_t oc = 0; oc < g->output_c; ++oc) {
        if (!channel_rq(&b, 1, mae, p, bias, oc, 0, g->filter_h * g->filter_w)) {
            return 0;
        }
    }
    return 1;
}

/* Pairs [a.bottom b.bottom] and [a.top b.top] of a filter line's doubled weights:
 * a, b, d hold taps 0, 1, 2 of two channels (bottom halves one, top halves the other). */
static inline void line_pairs(nnrt_dwp_ch_t *lo, nnrt_dwp_ch_t *hi, int32_t r, uint32_t a,
                              uint32_t b, uint32_t d)
{
    lo->w[2 * r] = nnrt_pkh_bottoms(a, b);
    lo->w[2 * r + 1] = nnrt_pkh_bottoms(b, d);
    hi->w[2 * r] = nnrt_pkh_tops(a, b);
    hi->w[2 * r + 1] = nnrt_pkh_tops(b, d);
}

/* The 3x3 channel's constants from s2 (weights set); zero weights when it is out. */
static NNRT_ALWAYS_INLINE int ch3_rq(nnrt_dwp_ch_t *c, const nnrt_conv_s8_params_t *p,
                                     const int32_t *bias, int32_t oc, int32_t s2)
{
    const int ok = channel_rq(c->b, 4, c->mae, p, bias, oc, s2, 9);
    if (!ok) {
        memset(c->w, 0, sizeof(c->w));
    }
    return ok;
}

uint32_t nnrt_dwp_channels(nnrt_dwp_ch_t *c, const nnrt_dwp_view_t *v,
                           const nnrt_conv_s8_params_t *p, const int8_t *filter,
                           const int32_t *bias, int32_t oc, int32_t n)
{
    const size_t along = (size_t)v->f_along;
    const size_t across = (size_t)v->f_across;
    uint32_t bad = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        /* four neighbouring channels: a tap is one word, as doubled pairs [c0 c2] [c1 c3] */
        uint32_t se = 0;
        uint32_t so = 0;
        const int8_t *f = filter + (size_t)(oc + i);
        for (int32_t r = 0; r < 3; ++r, f += across) {
            const uint32_t t0 = nnrt_ld32(f);
            const uint32_t t1 = nnrt_ld32(f + along);
            const uint32_t t2 = nnrt_ld32(f + 2 * along);
            const uint32_t e0 = __sxtb16(t0);
            const uint32_t e1 = __sxtb16(t1);
            const uint32_t e2 = __sxtb16(t2);
            const uint32_t o0 = nnrt_sxtb16_ror8(t0);
            const uint32_t o1 = nnrt_sxtb16_ror8(t1);
            const uint32_t o2 = nnrt_sxtb16_ror8(t2);
            se = __sadd16(se, __sadd16(__sadd16(e0, e1), e2));
            so = __sadd16(so, __sadd16(__sadd16(o0, o1), o2));
            line_pairs(&c[i], &c[i + 2], r, __sadd16(e0, e0), __sadd16(e1, e1), __sadd16(e2, e2));
            line_pairs(&c[i + 1], &c[i + 3], r, __sadd16(o0, o0), __sadd16(o1, o1),
                       __sadd16(o2, o2));
        }
        se = __sadd16(se, se); /* sums of the doubled weights */
        so = __sadd16(so, so);
        bad |= (uint32_t)!ch3_rq(&c[i], p, bias, oc + i, (int16_t)se) << i;
        bad |= (uint32_t)!ch3_rq(&c[i + 1], p, bias, oc + i + 1, (int16_t)so) << (i + 1);
        bad |= (uint32_t)!ch3_rq(&c[i + 2], p, bias, oc + i + 2, (int32_t)se >> 16) << (i + 2);
        bad |= (uint32_t)!ch3_rq(&c[i + 3], p, bias, oc + i + 3, (int32_t)so >> 16) << (i + 3);
    }
    for (; i < n; ++i) {
        int32_t s2 = 0;
        const int8_t *f = filter + (size_t)(oc + i);
        for (int32_t r = 0; r < 3; ++r, f += across) {
            const int32_t w0 = 2 * f[0];
            const int32_t w1 = 2 * f[along];
            const int32_t w2 = 2 * f[2 * along];
            c[i].w[2 * r] = ((uint32_t)w0 & 0xFFFFu) | ((uint32_t)w1 << 16);
            c[i].w[2 * r + 1] = ((uint32_t)w1 & 0xFFFFu) | ((uint32_t)w2 << 16);
            s2 += w0 + w1 + w2;
        }
        bad |= (uint32_t)!ch3_rq(&c[i], p, bias, oc + i, s2) << i;
    }
    return bad;
}

/* The strip of outputs [ox0, ox0 + n) of every line: the ring's geometry. */
static NNRT_ALWAYS_INLINE void ring_strip(nnrt_dwp_ring_t *r, int32_t ox0, int32_t n)
{
    const nnrt_dwp_view_t *v = r->v;
    r->wpw = line_words(v, n);
    r->lines = NNRT_DWP_WORDS / (r->planes * r->wpw);
    r->x0 = ox0 * v->s - v->pad;
    const int32_t wn = (n - 1) * v->s + v->kw;
    int32_t lo = r->x0 < 0 ? -r->x0 : 0;
    int32_t hi = v->len - r->x0;
    hi = hi < wn ? hi : wn;
    hi = hi > 0 ? hi : 0;
    lo = lo < hi ? lo : hi;
    r->pairs = (wn + 1) / 2;
    r->zl = lo / 2;
    r->lodd = lo & 1;
    /* values after the left pair [zero point, value] */
    const int32_t rest = hi - lo - r->lodd;
    r->lodd = rest >= 0 ? r->lodd : 0;
    r->np = rest > 0 ? rest / 2 : 0;
    r->rodd = rest > 0 ? rest & 1 : 0;
    r->off = (r->x0 + lo) * v->step;
    r->filled = 0;
}

void nnrt_dwp_strip(nnrt_dwp_ring_t *r, nnrt_dwp_job_t *j, int32_t ox0, int32_t n)
{
    const nnrt_dwp_view_t *v = r->v;
    ring_strip(r, ox0, n);
    r->adv = v->s * (8 * (n / 4) + 2 * (n & 2));
    j->quads = n / 4;
    j->tail = n % 4;
    j->step = v->out_step;
    j->ps = r->planes > 1 ? 4 * r->lines * r->wpw : 0;
    j->o_next = v->out_line - n * v->out_step;
}

/* Four channels' values a and b (one word each: neighbouring positions) as the pairs
 * [a_c b_c] of their planes d[c], post-incremented. */
#define PUT4(d0, d1, d2, d3, a, b)                                                            \
    do {                                                                                      \
        const uint32_t ea_ = __sxtb16(a);                                                     \
        const uint32_t eb_ = __sxtb16(b);                                                     \
        const uint32_t oa_ = nnrt_sxtb16_ror8(a);                                             \
        const uint32_t ob_ = nnrt_sxtb16_ror8(b);                                             \
        *(d0)++ = nnrt_pkh_bottoms(ea_, eb_);                                                 \
        *(d1)++ = nnrt_pkh_bottoms(oa_, ob_);                                                 \
        *(d2)++ = nnrt_pkh_tops(ea_, eb_);                                                    \
        *(d3)++ = nnrt_pkh_tops(oa_, ob_);                                                    \
    } while (0)

/* The strip's part of one input line s (NULL: a line outside the input) as pairs of
 * four planes (d, ps words apart), post-incremented: zl pairs of zero points, the
 * straddling pair [z, value] (lodd), np pairs of values, the pair [value, z] (rodd),
 * zero points to the end. */
static NNRT_ALWAYS_INLINE void line4(const nnrt_dwp_ring_t *r, uint32_t *d, size_t ps,
                                     const int8_t *s, size_t step, uint32_t zz, int32_t zr)
{
    const uint32_t z4 = ((uint32_t)r->z & 0xFFu) * 0x01010101u; /* in every byte */
    uint32_t *d1 = d + ps;
    uint32_t *d2 = d1 + ps;
    uint32_t *d3 = d2 + ps;
    int32_t k = r->pairs;
    if (s != NULL) {
        for (k = r->zl; k > 0; --k) {
            *d++ = zz;
            *d1++ = zz;
            *d2++ = zz;
            *d3++ = zz;
        }
        if (r->lodd) {
            const uint32_t b = nnrt_ld32(s);
            s += step;
            PUT4(d, d1, d2, d3, z4, b);
        }
        for (k = r->np; k > 0; --k) {
            const uint32_t a = nnrt_ld32(s);
            const uint32_t b = nnrt_ld32(s + step);
            s += 2 * step;
            PUT4(d, d1, d2, d3, a, b);
        }
        if (r->rodd) {
            const uint32_t a = nnrt_ld32(s);
            PUT4(d, d1, d2, d3, a, z4);
        }
        k = zr;
    }
    for (; k > 0; --k) {
        *d++ = zz;
        *d1++ = zz;
        *d2++ = zz;
        *d3++ = zz;
    }
}

/* The same for one plane (one channel). */
static NNRT_ALWAYS_INLINE void line1(const nnrt_dwp_ring_t *r, uint32_t *d, const int8_t *s,
                                     size_t step, uint32_t zz, int32_t zr)
{
    int32_t k = r->pairs;
    if (s != NULL) {
        for (k = r->zl; k > 0; --k) {
            *d++ = zz;
        }
        if (r->lodd) {
            *d++ = (zz & 0xFFFFu) | ((uint32_t)(int32_t)*s << 16);
            s += step;
        }
        k = r->np;
        if (step == 1) {
            /* contiguous values (one input channel): four per word load */
            for (; k >= 2; k -= 2, s += 4) {
                const uint32_t x = nnrt_ld32(s);
                const uint32_t e = __sxtb16(x);
                const uint32_t o = nnrt_sxtb16_ror8(x);
                *d++ = nnrt_pkh_bottoms(e, o);
                *d++ = nnrt_pkh_tops(e, o);
            }
        }
        for (; k > 0; --k, s += 2 * step) {
            *d++ = nnrt_pkh_bottoms((uint32_t)(int32_t)s[0], (uint32_t)(int32_t)s[step]);
        }
        if (r->rodd) {
            *d++ = nnrt_pkh_bottoms((uint32_t)(int32_t)*s, zz);
        }
        k = zr;
    }
    for (; k > 0; --k) {
        *d++ = zz;
    }
}

/* Ring lines [l, end) (counted from v->first): their input lines converted. */
static NNRT_NOINLINE void fill(const nnrt_dwp_ring_t *r, int32_t l, int32_t end)
{
    const nnrt_dwp_view_t *v = r->v;
    const size_t step = (size_t)v->step;
    const size_t ps = (size_t)r->lines * (size_t)r->wpw;
    const uint32_t zz = ((uint32_t)r->z & 0xFFFFu) * 0x00010001u;
    const int32_t zr = r->pairs - r->zl - r->lodd - r->np - r->rodd;
    int32_t at = l % r->lines;
    for (int32_t y = v->first + l; l < end; ++l, ++y) {
        uint32_t *d = r->buf + at * r->wpw;
        at = at + 1 < r->lines ? at + 1 : 0;
        const int8_t *s = y >= 0 && y < v->count ? r->in + y * v->line + r->off : NULL;
        if (r->planes > 1) {
            line4(r, d, ps, s, step, zz, zr);
        } else {
            line1(r, d, s, step, zz, zr);
        }
    }
}

/* Convert the lines output lines [ol, ol + k) read, k <= max_k as long as their windows
 * stay in consecutive ring lines (at least 1); *slot: the ring line of line ol's first
 * window line. Returns k. */
static NNRT_ALWAYS_INLINE int32_t ring_run(nnrt_dwp_ring_t *r, int32_t ol, int32_t max_k,
                                           int32_t *slot)
{
    const nnrt_dwp_view_t *v = r->v;
    const int32_t lines = r->lines;
    const int32_t top = ol * v->sl;
    *slot = top % lines;
    int32_t k = 1;
    if (*slot + v->kh <= lines) {
        k = (lines - *slot - v->kh) / v->sl + 1;
        k = k < max_k ? k : max_k;
        k = k > 1 ? k : 1;
    }
    const int32_t end = top + (k - 1) * v->sl + v->kh;
    const int32_t l = r->filled > top ? r->filled : top;
    if (l < end) {
        fill(r, l, end);
        r->filled = end;
    }
    return k;
}

int32_t nnrt_dwp_lines(nnrt_dwp_ring_t *r, nnrt_dwp_job_t *j, int32_t ol, int32_t max_k)
{
    const nnrt_dwp_view_t *v = r->v;
    const int32_t lines = r->lines;
    const int32_t wpw = r->wpw;
    int32_t slot;
    const int32_t k = ring_run(r, ol, max_k, &slot);
    j->p[0] = r->buf + slot * wpw;
    j->p[1] = r->buf + (slot + 1 < lines ? slot + 1 : 0) * wpw;
    j->p[2] = r->buf + (slot + 2 < lines ? slot + 2 : slot + 2 - lines) * wpw;
    j->p_next = 4 * v->sl * wpw - r->adv;
    j->rows = k;
    return k;
}

void nnrt_dwp_pass(const nnrt_dwp_view_t *v, uint32_t *buf, const nnrt_dwp_ch_t *ch, int32_t nch,
                   int32_t planes, const int8_t *in, int8_t *out, int32_t z)
{
    nnrt_dwp_ring_t r;
    nnrt_dwp_job_t j;
    nnrt_dwp_ring(&r, v, buf, in, planes, z);
    const int32_t per = nnrt_dwp_per_strip(v, planes);
    for (int32_t ox0 = 0; ox0 < v->n; ox0 += per) {
        nnrt_dwp_strip(&r, &j, ox0, v->n - ox0 < per ? v->n - ox0 : per);
        for (int32_t ol = 0; ol < v->lines; ol += j.rows) {
            nnrt_dwp_lines(&r, &j, ol, v->lines - ol);
            j.out = out + ol * v->out_line + ox0 * v->out_step;
            j.nch = nch;
            j.ch = ch;
            nnrt_dwp_run(&j, v->s);
        }
    }
}

uint32_t nnrt_dwp_pass3(const nnrt_dwp_view_t *v, uint32_t *buf, const nnrt_conv_s8_params_t *p,
                        const int8_t *filter, const int32_t *bias, int32_t oc, int32_t nch,
                        int32_t planes, const int8_t *in, int8_t *out)
{
    nnrt_dwp_ch_t ch[NNRT_DWP_MAX_CH];
    const uint32_t bad = nnrt_dwp_channels(ch, v, p, filter, bias, oc, nch);
    nnrt_dwp_pass(v, buf, ch, nch, planes, in, out, -p->input_offset);
    return bad;
}

int nnrt_dwp_converts_first(const nnrt_dwp_view_t *v, int32_t planes)
{
    return v->n <= nnrt_dwp_per_strip(v, planes)
           && (int64_t)((v->lines - 1) * v->sl + v->kh) * planes * line_words(v, v->n)
                  <= NNRT_DWP_WORDS;
}

void nnrt_dwp_clamp(int8_t *x, size_t n, int32_t lo, int32_t hi)
{
    for (size_t i = 0; i < n; ++i) {
        int32_t v = x[i];
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        x[i] = (int8_t)v;
    }
}

/* acc requantised (fast form of dw_plane.h; mae: multiplier, addend, shift) and
 * clamped to int8. */
static inline int32_t gen_rq(int32_t acc, const int32_t *mae)
{
    int32_t t;
    __asm__("add %0, %2, %1, asr #31\n\t"
            "smmlar %0, %1, %3, %0\n\t"
            "asr %0, %0, %4\n\t"
            "ssat %0, #8, %0"
            : "=&r"(t)
            : "r"(acc), "r"(mae[1]), "r"(mae[0]), "r"(mae[2]));
    return t;
}

/*
 * The generic path (other filters than 3x3, at most NNRT_DWP_MAX_K lines and taps per
 * line and NNRT_DWP_GEN_WORDS words of constants), in C: per filter line the doubled
 * weights as even pairs E_q = [w2q w2q+1] and, at stride 1, odd pairs
 * O_q = [w2q-1 w2q] (zero outside the filter). Stride 1: outputs i (even) and i + 1
 * take SMLAD(P(i + 2q), E_q) and SMLAD(P(i + 2q), O_q), one load for both; stride 2:
 * outputs i and i + 1 take SMLAD(P(2i + 2q), E_q) and SMLAD(P(2i + 2q + 2), E_q).
 */
typedef struct {
    int32_t b;             /* doubled start value */
    int32_t mae[3];        /* multiplier, addend, shift */
    uint32_t w[NNRT_DWP_GEN_WORDS];
} gen_ch_t;

/* Doubled int16 weights [a b] (a, b int8). */
static inline uint32_t gen_pair(int32_t a, int32_t b)
{
    return nnrt_pkh_bottoms((uint32_t)(2 * a), (uint32_t)(2 * b));
}

/* Output channel oc's constants; 0 when it is outside the plane path. */
static int gen_channel(gen_ch_t *c, const nnrt_dwp_view_t *v, const nnrt_conv_s8_params_t *p,
                       const int8_t *filter, const int32_t *bias, int32_t oc)
{
    const int32_t kw = v->kw;
    const int32_t s1 = v->s == 1;
    const size_t along = (size_t)v->f_along;
    uint32_t *w = c->w;
    int32_t sum = 0;
    const int8_t *line = filter + oc;
    for (int32_t r = 0; r < v->kh; ++r, line += v->f_across) {
        const int8_t *f = line;
        int32_t prev = 0; /* tap 2q - 1 */
        int32_t k = kw;
        for (; k >= 2; k -= 2, f += 2 * along) {
            const int32_t a = f[0];
            const int32_t b = f[along];
            *w++ = gen_pair(a, b);
            if (s1) {
                *w++ = gen_pair(prev, a);
            }
            prev = b;
            sum += a + b;
        }
        /* the last pairs: [w(kw-1) 0] (odd kw), and at stride 1 [w(kw-2) w(kw-1)] or
         * [0 0] [w(kw-1) 0] (even kw) */
        const int32_t a = k == 1 ? f[0] : 0;
        if (k == 1 || s1) {
            *w++ = gen_pair(a, 0);
        }
        if (s1) {
            *w++ = gen_pair(prev, a);
        }
        sum += a;
    }
    return channel_rq(&c->b, 1, c->mae, p, bias, oc, 2 * sum, v->kh * kw);
}

/* Unroll the next loop (a constant trip count at the calls of gen_line()). */
#if defined(__GNUC__) && !defined(__clang__)
#define GEN_UNROLL _Pragma("GCC unroll 8")
#else
#define GEN_UNROLL
#endif

/* One output line of one channel: its n outputs from the plane lines lp[0, kh); s1:
 * stride 1; pw: words per filter line in c->w; ne: its even pairs (constants at the
 * calls below, so that the pair loops unroll). */
static NNRT_ALWAYS_INLINE void gen_line(const uint32_t *const *lp, int32_t kh, int32_t step,
                                        int32_t n, const gen_ch_t *c, int8_t *out,
                                        const int32_t s1, const int32_t pw, const int32_t ne)
{
    int32_t i = 0;
    for (; i + 2 <= n; i += 2, out += 2 * step) {
        int32_t a0 = c->b;
        int32_t a1 = c->b;
        const uint32_t *w = c->w;
        for (int32_t r = 0; r < kh; ++r, w += pw) {
            if (s1) {
                const uint32_t *x = lp[r] + i / 2;
                GEN_UNROLL
                for (int32_t q = 0; q < pw; q += 2) {
                    const uint32_t xv = x[q / 2];
                    a0 = __smlad(xv, w[q], a0);
                    a1 = __smlad(xv, w[q + 1], a1);
                }
            } else {
                const uint32_t *x = lp[r] + i;
                GEN_UNROLL
                for (int32_t q = 0; q < pw; ++q) {
                    a0 = __smlad(x[q], w[q], a0);
                    a1 = __smlad(x[q + 1], w[q], a1);
                }
            }
        }
        out[0] = (int8_t)gen_rq(a0, c->mae);
        out[step] = (int8_t)gen_rq(a1, c->mae);
    }
    if (i < n) {
        int32_t a0 = c->b;
        const uint32_t *w = c->w;
        for (int32_t r = 0; r < kh; ++r, w += pw) {
            const uint32_t *x = lp[r] + (s1 ? i / 2 : i);
            for (int32_t q = 0; q < ne; ++q) {
                a0 = __smlad(x[q], w[s1 ? 2 * q : q], a0);
            }
        }
        out[0] = (int8_t)gen_rq(a0, c->mae);
    }
}

/* gen_line() for the filter widths of the models at hand (5 taps at stride 1, 5 or 6
 * and 7 or 8 at stride 2) with the pair loops unrolled, and for any other. */
static NNRT_NOINLINE void gen_line_any(const uint32_t *const *lp, const nnrt_dwp_view_t *v,
                                       int32_t n, const gen_ch_t *c, int8_t *out)
{
    const int32_t s1 = v->s == 1;
    const int32_t ne = (v->kw + 1) / 2;
    const int32_t pw = s1 ? 2 * (v->kw / 2 + 1) : ne;
    if (s1 && pw == 6) {
        gen_line(lp, v->kh, v->out_step, n, c, out, 1, 6, 3);
    } else if (!s1 && pw == 3) {
        gen_line(lp, v->kh, v->out_step, n, c, out, 0, 3, 3);
    } else if (!s1 && pw == 4) {
        gen_line(lp, v->kh, v->out_step, n, c, out, 0, 4, 4);
    } else {
        gen_line(lp, v->kh, v->out_step, n, c, out, s1, pw, ne);
    }
}

uint32_t nnrt_dwp_gen_pass(const nnrt_dwp_view_t *v, uint32_t *buf,
                           const nnrt_conv_s8_params_t *p, const int8_t *filter,
                           const int32_t *bias, int32_t oc, int32_t nch, int32_t planes,
                           const int8_t *in, int8_t *out)
{
    nnrt_dwp_ring_t r;
    gen_ch_t c;
    nnrt_dwp_ring(&r, v, buf, in, planes, -p->input_offset);
    uint32_t bad = 0;
    const int32_t per = nnrt_dwp_per_strip(v, planes);
    for (int32_t ox0 = 0; ox0 < v->n; ox0 += per) {
        const int32_t n = v->n - ox0 < per ? v->n - ox0 : per;
        ring_strip(&r, ox0, n);
        const size_t ps = planes > 1 ? (size_t)r.lines * (size_t)r.wpw : 0;
        int32_t k;
        for (int32_t ol = 0; ol < v->lines; ol += k) {
            int32_t slot;
            k = ring_run(&r, ol, v->lines - ol, &slot);
            for (int32_t i = 0; i < nch; ++i) {
                if (!gen_channel(&c, v, p, filter, bias, oc + i)) {
                    bad |= 1u << i; /* the caller computes it */
                    continue;
                }
                int8_t *o = out + i + ol * v->out_line + ox0 * v->out_step;
                const uint32_t *plane = buf + (size_t)i * ps;
                int32_t at = slot;
                for (int32_t l = 0; l < k; ++l, o += v->out_line, at += v->sl) {
                    /* the run's lines are consecutive in the ring, but for k = 1 */
                    const uint32_t *lp[NNRT_DWP_MAX_K];
                    for (int32_t t = 0, a = at; t < v->kh; ++t, ++a) {
                        lp[t] = plane + (size_t)(a < r.lines ? a : a - r.lines) * (size_t)r.wpw;
                    }
                    gen_line_any(lp, v, n, &c, o);
                }
            }
        }
    }
    return bad;
}

/*
 * The line loop (nnrt_dwp_job_t at r0). Its stack frame: the current channel's
 * constants (nnrt_dwp_ch_t, offset 0), the job (52), the lines left (104); everything
 * the loops reload is sp-relative, so that all 14 registers are free:
 *   r0, r1, r2: the three plane lines of the windows; r3: output; lr: output step;
 *   r4-r7: four accumulators; r12: quads left on the line;
 *   r8-r11: plane pairs and a filter line's weights, then multiplier, addend, shift and
 *   a temporary of the requantisation.
 * In assembly because it needs every register and the 64-bit loads (LDRD, LDM) GCC
 * does not form from the C; a naked function (no operands) also assembles at -O0.
 */
#define J_MULT "16"
#define J_E "24"
#define J_W0 "28"
#define J_W1 "36"
#define J_W2 "44"
#define J_JOB "52"
#define J_P0 "52"
#define J_P2 "60"
#define J_OUT "64"
#define J_QUADS "68"
#define J_TAIL "72"
#define J_ROWS "76"
#define J_PNEXT "80"
#define J_ONEXT "84"
#define J_STEP "88"
#define J_PS "92"
#define J_NCH "96"
#define J_CH "100"
#define J_LEFT "104"
#define J_SIZE "108"

/* Requantise accumulator A (r8 multiplier, r9 addend, r10 shift; r11 scratch). */
#define DWP_RQ(A)                                                                             \
    "add r11, r9, " A ", asr #31\n\t"                                                        \
    "smmlar " A ", " A ", r8, r11\n\t"                                                        \
    "asr " A ", " A ", r10\n\t"                                                               \
    "ssat " A ", #8, " A "\n\t"

#define DWP_RQ_LOAD                                                                           \
    "ldrd r8, r9, [sp, #" J_MULT "]\n\t"                                                      \
    "ldr r10, [sp, #" J_E "]\n\t"

/* One filter line of a single output (both strides): P0 = [x0 x1], P2 = [x2 x3]. */
#define DWP_ROW1(P, W)                                                                        \
    "ldrd r10, r11, [sp, #" W "]\n\t"                                                         \
    "ldrd r8, r9, [" P "]\n\t"                                                                \
    "smlad r4, r8, r10, r4\n\t"                                                               \
    "smlabt r4, r9, r11, r4\n\t"

/* Stride 1: four outputs of one filter line from P0 P2 P4 (outputs 0-3 read x0..x5). */
#define DWP_S1_ROW4(P, W)                                                                     \
    "ldrd r10, r11, [sp, #" W "]\n\t"                                                         \
    "ldrd r8, r9, [" P "], #8\n\t"                                                            \
    "smlad r4, r8, r10, r4\n\t"                                                               \
    "smlatb r5, r8, r10, r5\n\t"                                                              \
    "ldr r8, [" P "]\n\t"                                                                     \
    "smlabt r4, r9, r11, r4\n\t"                                                              \
    "smlad r5, r9, r11, r5\n\t"                                                               \
    "smlad r6, r9, r10, r6\n\t"                                                               \
    "smlatb r7, r9, r10, r7\n\t"                                                              \
    "smlabt r6, r8, r11, r6\n\t"                                                              \
    "smlad r7, r8, r11, r7\n\t"

#define DWP_S1_ROW2(P, W)                                                                     \
    "ldrd r10, r11, [sp, #" W "]\n\t"                                                         \
    "ldrd r8, r9, [" P "], #4\n\t"                                                            \
    "smlad r4, r8, r10, r4\n\t"                                                               \
    "smlatb r5, r8, r10, r5\n\t"                                                              \
    "smlabt r4, r9, r11, r4\n\t"                                                              \
    "smlad r5, r9, r11, r5\n\t"

/* Stride 2: output i from x(2i), x(2i+1), x(2i+2). */
#define DWP_S2_ROW4(P, W)                                                                     \
    "ldrd r10, r11, [sp, #" W "]\n\t"                                                         \
    "ldrd r8, r9, [" P "], #8\n\t"                                                            \
    "smlad r4, r8, r10, r4\n\t"                                                               \
    "smlabt r4, r9, r11, r4\n\t"                                                              \
    "smlad r5, r9, r10, r5\n\t"                                                               \
    "ldrd r8, r9, [" P "], #8\n\t"                                                            \
    "smlabt r5, r8, r11, r5\n\t"                                                              \
    "smlad r6, r8, r10, r6\n\t"                                                               \
    "smlabt r6, r9, r11, r6\n\t"                                                              \
    "smlad r7, r9, r10, r7\n\t"                                                               \
    "ldr r8, [" P "]\n\t"                                                                     \
    "smlabt r7, r8, r11, r7\n\t"

#define DWP_S2_ROW2(P, W)                                                                     \
    "ldrd r10, r11, [sp, #" W "]\n\t"                                                         \
    "ldrd r8, r9, [" P "], #8\n\t"                                                            \
    "smlad r4, r8, r10, r4\n\t"                                                               \
    "smlabt r4, r9, r11, r4\n\t"                                                              \
    "smlad r5, r9, r10, r5\n\t"                                                               \
    "ldr r8, [" P "]\n\t"                                                                     \
    "smlabt r5, r8, r11, r5\n\t"

/* The whole loop: channels, their lines, quads / pair / single output per line. */
#define DWP_BODY(L, ROW4, ROW2)                                                               \
    "push {r4-r11, lr}\n\t"                                                                   \
    "sub sp, sp, #" J_SIZE "\n\t"                                                             \
    "ldmia r0, {r1-r12, lr}\n\t"                                                              \
    "add r0, sp, #" J_JOB "\n\t"                                                              \
    "stmia r0, {r1-r12, lr}\n"                                                                \
    L "_ch:\n\t"                                                                              \
    "ldr r0, [sp, #" J_CH "]\n\t"                                                             \
    "ldmia r0!, {r1-r12, lr}\n\t"                                                             \
    "str r0, [sp, #" J_CH "]\n\t"                                                             \
    "stmia sp, {r1-r12, lr}\n\t"                                                              \
    "ldr r12, [sp, #" J_ROWS "]\n\t"                                                          \
    "str r12, [sp, #" J_LEFT "]\n\t"                                                          \
    "add r0, sp, #" J_JOB "\n\t"                                                              \
    "ldmia r0, {r0-r3}\n\t"                                                                   \
    "ldr lr, [sp, #" J_STEP "]\n"                                                             \
    L "_row:\n\t"                                                                             \
    "ldr r12, [sp, #" J_QUADS "]\n\t"                                                         \
    "cmp r12, #0\n\t"                                                                         \
    "beq " L "_tail\n"                                                                        \
    L "_quad:\n\t"                                                                            \
    "ldmia sp, {r4-r7}\n\t"                                                                   \
    ROW4("r0", J_W0) ROW4("r1", J_W1) ROW4("r2", J_W2)                                        \
    DWP_RQ_LOAD DWP_RQ("r4") DWP_RQ("r5") DWP_RQ("r6") DWP_RQ("r7")                           \
    "strb r4, [r3]\n\t"                                                                       \
    "strb r5, [r3, lr]\n\t"                                                                   \
    "add r3, r3, lr, lsl #1\n\t"                                                              \
    "strb r6, [r3]\n\t"                                                                       \
    "strb r7, [r3, lr]\n\t"                                                                   \
    "add r3, r3, lr, lsl #1\n\t"                                                              \
    "subs r12, r12, #1\n\t"                                                                   \
    "bne " L "_quad\n"                                                                        \
    L "_tail:\n\t"                                                                            \
    "ldr r12, [sp, #" J_TAIL "]\n\t"                                                          \
    "tst r12, #2\n\t"                                                                         \
    "beq " L "_single\n\t"                                                                    \
    "ldrd r4, r5, [sp]\n\t"                                                                   \
    ROW2("r0", J_W0) ROW2("r1", J_W1) ROW2("r2", J_W2)                                        \
    DWP_RQ_LOAD DWP_RQ("r4") DWP_RQ("r5")                                                     \
    "strb r4, [r3]\n\t"                                                                       \
    "strb r5, [r3, lr]\n\t"                                                                   \
    "add r3, r3, lr, lsl #1\n"                                                                \
    L "_single:\n\t"                                                                          \
    "tst r12, #1\n\t"                                                                         \
    "beq " L "_next\n\t"                                                                      \
    "ldr r4, [sp]\n\t"                                                                        \
    DWP_ROW1("r0", J_W0) DWP_ROW1("r1", J_W1) DWP_ROW1("r2", J_W2)                            \
    DWP_RQ_LOAD DWP_RQ("r4")                                                                  \
    "strb r4, [r3]\n\t"                                                                       \
    "add r3, r3, lr\n"                                                                        \
    L "_next:\n\t"                                                                            \
    "ldr r12, [sp, #" J_PNEXT "]\n\t"                                                         \
    "add r0, r0, r12\n\t"                                                                     \
    "add r1, r1, r12\n\t"                                                                     \
    "add r2, r2, r12\n\t"                                                                     \
    "ldr r12, [sp, #" J_ONEXT "]\n\t"                                                         \
    "add r3, r3, r12\n\t"                                                                     \
    "ldr r12, [sp, #" J_LEFT "]\n\t"                                                          \
    "subs r12, r12, #1\n\t"                                                                   \
    "str r12, [sp, #" J_LEFT "]\n\t"                                                          \
    "bne " L "_row\n\t"                                                                       \
    "ldr r12, [sp, #" J_PS "]\n\t"                                                            \
    "ldrd r0, r1, [sp, #" J_P0 "]\n\t"                                                        \
    "ldr r2, [sp, #" J_P2 "]\n\t"                                                             \
    "add r0, r0, r12\n\t"                                                                     \
    "add r1, r1, r12\n\t"                                                                     \
    "add r2, r2, r12\n\t"                                                                     \
    "strd r0, r1, [sp, #" J_P0 "]\n\t"                                                        \
    "str r2, [sp, #" J_P2 "]\n\t"                                                             \
    "ldr r3, [sp, #" J_OUT "]\n\t"                                                            \
    "adds r3, r3, #1\n\t"                                                                     \
    "str r3, [sp, #" J_OUT "]\n\t"                                                            \
    "ldr r12, [sp, #" J_NCH "]\n\t"                                                           \
    "subs r12, r12, #1\n\t"                                                                   \
    "str r12, [sp, #" J_NCH "]\n\t"                                                           \
    "bne " L "_ch\n\t"                                                                        \
    "add sp, sp, #" J_SIZE "\n\t"                                                             \
    "pop {r4-r11, pc}\n\t"

__attribute__((naked, noinline)) static void dwp_lines_s1(
    __attribute__((unused)) const nnrt_dwp_job_t *j)
{
    __asm__ volatile(DWP_BODY(".Ldwp_s1", DWP_S1_ROW4, DWP_S1_ROW2));
}

__attribute__((naked, noinline)) static void dwp_lines_s2(
    __attribute__((unused)) const nnrt_dwp_job_t *j)
{
    __asm__ volatile(DWP_BODY(".Ldwp_s2", DWP_S2_ROW4, DWP_S2_ROW2));
}

void nnrt_dwp_run(const nnrt_dwp_job_t *j, int32_t stride)
{
    if (stride == 1) {
        dwp_lines_s1(j);
    } else {
        dwp_lines_s2(j);
    }
}
#endif /* NNRT_DW_PLANE */
