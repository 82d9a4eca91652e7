/*
 * Fast int8 depthwise convolution (no fused pool, KH * KW <= NNRT_DW_MAX_TAPS), the
 * arithmetic of TFLM's reference DepthwiseConvPerChannel (taps outside the input
 * skipped, exact int32 sums), requantised once per output (internal/requant.h).
 *
 * Output channels go in groups of four, outermost, so that everything per channel is
 * prepared once per call: the group's weights of every tap, sign-extended into the two
 * int16 pairs [w0 w2] [w1 w3] (a small array on the stack, 8 * KH * KW bytes), the
 * requantisation constants and the bias. Then every output pixel; per tap one word of
 * inputs: four channels (depth multiplier 1: SXTAB16 adds the input offset to two at a
 * time) or one input channel for all four (multiplier a multiple of 4), and four
 * SMLABB / SMLATT. Pixels whose window lies inside the input use precomputed tap
 * offsets (3x3 undilated windows fully unrolled); border pixels clip their taps.
 * Channels that do not form such a group, and cores without the DSP extension, run
 * one channel at a time in portable C with the same order of work.
 */
#include <stddef.h>
#include <stdint.h>

#include "conv_check.h"
#include "dw.h"
#include "requant.h"
#include "simd.h"

/* First k >= 0 with origin + k * step >= 0. */
static int32_t first_inside(int32_t origin, int32_t step)
{
    return origin >= 0 ? 0 : (-origin + step - 1) / step;
}

/* One past the last k < taps with origin + k * step < size. */
static int32_t end_inside(int32_t origin, int32_t step, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t n = (size - origin + step - 1) / step;
    return n < taps ? n : taps;
}

/* Byte offsets of every tap from the window origin: toff[fy * KW + fx]. */
static void tap_offsets(const nnrt_conv_geom_t *g, int32_t toff[NNRT_DW_MAX_TAPS])
{
    for (int32_t fy = 0; fy < g->filter_h; ++fy) {
        for (int32_t fx = 0; fx < g->filter_w; ++fx) {
            toff[fy * g->filter_w + fx] =
                (fy * g->dilation_h * g->input_w + fx * g->dilation_w) * g->input_c;
        }
    }
}

/* Output channel oc, one at a time (portable C). */
static void channel1(const nnrt_conv_s8_params_t *p, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output, int32_t oc,
                     const int32_t toff[NNRT_DW_MAX_TAPS])
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t taps = g->filter_h * g->filter_w;
    const size_t c = (size_t)g->input_c;
    const size_t oc_n = (size_t)g->output_c;
    const int32_t in_off = p->input_offset;
    const int32_t out_off = p->output_offset;
    const int32_t lo = p->act_min;
    const int32_t hi = p->act_max;
    const int8_t *in_c = input + oc / g->filter_c;
    int32_t w[NNRT_DW_MAX_TAPS];
    for (int32_t t = 0; t < taps; ++t) {
        w[t] = filter[(size_t)t * oc_n + (size_t)oc];
    }
    nnrt_rqf_t q;
    nnrt_rqf_init(&q, p->multiplier[p->per_channel ? oc : 0], p->shift[p->per_channel ? oc : 0],
                  out_off);
    const int32_t b0 = bias != NULL ? bias[oc] : 0;
    int8_t *out = output + oc;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = in_c + (size_t)b * (size_t)g->input_h * (size_t)g->input_w * c;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy_s = first_inside(y0, g->dilation_h);
            const int32_t fy_e = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += oc_n) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_s = first_inside(x0, g->dilation_w);
                const int32_t fx_e = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
                int32_t acc = b0;
                if (fy_s == 0 && fy_e == g->filter_h && fx_s == 0 && fx_e == g->filter_w) {
                    const int8_t *base = in_b + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * c;
                    for (int32_t t = 0; t < taps; ++t) {
                        acc += w[t] * ((int32_t)base[toff[t]] + in_off);
                    }
                } else {
                    for (int32_t fy = fy_s; fy < fy_e; ++fy) {
                        const int8_t *row =
                            in_b + (size_t)(y0 + fy * g->dilation_h) * (size_t)g->input_w * c;
                        for (int32_t fx = fx_s; fx < fx_e; ++fx) {
                            acc += w[fy * g->filter_w + fx]
                                   * ((int32_t)row[(size_t)(x0 + fx * g->dilation_w) * c] + in_off);
                        }
                    }
                }
                *out = nnrt_act8(nnrt_rqf(acc, &q, out_off), lo, hi);
            }
        }
    }
}

#if NNRT_DSP
/* One tap of a group: input pairs (xe, xo), weight pairs wp[0] = [w0 w2], wp[1] = [w1 w3]. */
#define DW_MAC(xe, xo, wp)                                                                    \
    do {                                                                                      \
        a0 = __smlabb((xe), (wp)[0], a0);                                                     \
        a2 = __smlatt((xe), (wp)[0], a2);                                                     \
        a1 = __smlabb((xo), (wp)[1], a1);                                                     \
        a3 = __smlatt((xo), (wp)[1], a3);                                                     \
    } while (0)

/* Depth multiplier 1: the word at ptr holds the 4 channels' inputs. */
#define DW_TAP4(ptr, wp)                                                                      \
    do {                                                                                      \
        const uint32_t xv_ = nnrt_ld32(ptr);                                                  \
        const uint32_t xe_ = __sxtab16(off2, xv_);                                            \
        const uint32_t xo_ = nnrt_sxtab16_ror8(off2, xv_);                                    \
        DW_MAC(xe_, xo_, wp);                                                                 \
    } while (0)

/* Multiplier a multiple of 4: one input for all 4 channels. */
#define DW_TAP1(ptr, wp)                                                                      \
    do {                                                                                      \
        const uint32_t xb_ = *(const uint8_t *)(ptr);                                         \
        const uint32_t xx_ = __sxtab16(off2, xb_ | (xb_ << 16));                              \
        DW_MAC(xx_, xx_, wp);                                                                 \
    } while (0)

/* Requantisation of a group's 4 channels, prepared once per call. */
typedef struct {
    nnrt_rqf_t q[4];
    int32_t out_off;
    int32_t lo;
    int32_t hi;
    int32_t fast; /* every channel in the fast form */
    int32_t full; /* activation range is all of int8 */
} rq4_t;

/* The reference requantisation of 4 outputs (a channel outside the fast form). */
static NNRT_NOINLINE void store4_any(const rq4_t *r, int8_t *out, int32_t a0, int32_t a1,
                                     int32_t a2, int32_t a3)
{
    out[0] = nnrt_act8(nnrt_rqf(a0, &r->q[0], r->out_off), r->lo, r->hi);
    out[1] = nnrt_act8(nnrt_rqf(a1, &r->q[1], r->out_off), r->lo, r->hi);
    out[2] = nnrt_act8(nnrt_rqf(a2, &r->q[2], r->out_off), r->lo, r->hi);
    out[3] = nnrt_act8(nnrt_rqf(a3, &r->q[3], r->out_off), r->lo, r->hi);
}

static NNRT_ALWAYS_INLINE void store4(const rq4_t *r, int8_t *out, int32_t a0, int32_t a1,
                                      int32_t a2, int32_t a3)
{
    if (!r->fast) {
        store4_any(r, out, a0, a1, a2, a3);
        return;
    }
    const int32_t v0 = nnrt_sat8(nnrt_rqf_fast(a0, r->q[0].mult, r->q[0].add, r->q[0].rsh));
    const int32_t v1 = nnrt_sat8(nnrt_rqf_fast(a1, r->q[1].mult, r->q[1].add, r->q[1].rsh));
    const int32_t v2 = nnrt_sat8(nnrt_rqf_fast(a2, r->q[2].mult, r->q[2].add, r->q[2].rsh));
    const int32_t v3 = nnrt_sat8(nnrt_rqf_fast(a3, r->q[3].mult, r->q[3].add, r->q[3].rsh));
    if (r->full) {
        out[0] = (int8_t)v0;
        out[1] = (int8_t)v1;
        out[2] = (int8_t)v2;
        out[3] = (int8_t)v3;
    } else {
        out[0] = nnrt_act8(v0, r->lo, r->hi);
        out[1] = nnrt_act8(v1, r->lo, r->hi);
        out[2] = nnrt_act8(v2, r->lo, r->hi);
        out[3] = nnrt_act8(v3, r->lo, r->hi);
    }
}

/* What the interior of a row needs (one channel group). */
typedef struct {
    const uint32_t *wx;     /* extended weights, 2 words per tap */
    const int32_t *toff;    /* tap byte offsets */
    const int32_t *b0;      /* the group's 4 biases */
    const rq4_t *r;
    size_t c;               /* input channels (tap step in bytes) */
    size_t row_stride;      /* bytes per input row */
    size_t x_step;          /* bytes between the windows of neighbouring outputs */
    size_t oc_n;            /* output channels (output pixel step) */
    int32_t taps;
    uint32_t off2;
} row_t;

/* n output pixels of a row whose windows lie inside the input, 3x3 undilated, m == 1. */
static NNRT_NOINLINE void row_3x3(const row_t *k, const int8_t *base, int8_t *out, int32_t n)
{
    const uint32_t *wx = k->wx;
    const size_t c = k->c;
    const size_t rs = k->row_stride;
    const uint32_t off2 = k->off2;
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t a0 = k->b0[0];
        int32_t a1 = k->b0[1];
        int32_t a2 = k->b0[2];
        int32_t a3 = k->b0[3];
        const int8_t *r0 = base;
        DW_TAP4(r0, wx);
        DW_TAP4(r0 + c, wx + 2);
        DW_TAP4(r0 + 2 * c, wx + 4);
        r0 += rs;
        DW_TAP4(r0, wx + 6);
        DW_TAP4(r0 + c, wx + 8);
        DW_TAP4(r0 + 2 * c, wx + 10);
        r0 += rs;
        DW_TAP4(r0, wx + 12);
        DW_TAP4(r0 + c, wx + 14);
        DW_TAP4(r0 + 2 * c, wx + 16);
        store4(k->r, out, a0, a1, a2, a3);
    }
}

/* The same for any window (taps at toff), m == 1 (bcast == 0) or m % 4 == 0. */
static NNRT_NOINLINE void row_any(const row_t *k, const int8_t *base, int8_t *out, int32_t n,
                                  int bcast)
{
    const uint32_t off2 = k->off2;
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t a0 = k->b0[0];
        int32_t a1 = k->b0[1];
        int32_t a2 = k->b0[2];
        int32_t a3 = k->b0[3];
        for (int32_t t = 0; t < k->taps; ++t) {
            if (bcast) {
                DW_TAP1(base + k->toff[t], k->wx + 2 * t);
            } else {
                DW_TAP4(base + k->toff[t], k->wx + 2 * t);
            }
        }
        store4(k->r, out, a0, a1, a2, a3);
    }
}

/* Output channels [oc, oc + 4). */
static void group4(const nnrt_conv_s8_params_t *p, const int8_t *input, const int8_t *filter,
                   const int32_t *bias, int8_t *output, int32_t oc,
                   const int32_t toff[NNRT_DW_MAX_TAPS])
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t taps = g->filter_h * g->filter_w;
    const size_t c = (size_t)g->input_c;
    const size_t oc_n = (size_t)g->output_c;
    const size_t row_stride = (size_t)g->input_w * c;
    const size_t x_step = (size_t)g->stride_w * c;
    const int bcast = g->filter_c != 1;
    const int unrolled = !bcast && g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1
                         && g->dilation_w == 1;
    const uint32_t off2 = nnrt_pair16(p->input_offset);
    uint32_t wx[2 * NNRT_DW_MAX_TAPS];
    for (int32_t t = 0; t < taps; ++t) {
        const uint32_t wv = nnrt_ld32(filter + (size_t)t * oc_n + (size_t)oc);
        wx[2 * t] = __sxtb16(wv);
        wx[2 * t + 1] = nnrt_sxtb16_ror8(wv);
    }
    rq4_t r;
    r.out_off = p->output_offset;
    r.lo = p->act_min;
    r.hi = p->act_max;
    r.fast = 1;
    r.full = r.lo == INT8_MIN && r.hi == INT8_MAX;
    int32_t b0[4] = {0, 0, 0, 0};
    for (int32_t i = 0; i < 4; ++i) {
        const int32_t qi = p->per_channel ? oc + i : 0;
        nnrt_rqf_init(&r.q[i], p->multiplier[qi], p->shift[qi], r.out_off);
        r.fast &= r.q[i].fast;
        if (bias != NULL) {
            b0[i] = bias[oc + i];
        }
    }
    const row_t k = {wx, toff, b0, &r, c, row_stride, x_step, oc_n, taps, off2};
    /* Output columns whose window lies inside the input's width: [ox_lo, ox_hi). */
    const int32_t span = (g->filter_w - 1) * g->dilation_w;
    const int32_t ox_lo = (g->pad_left + g->stride_w - 1) / g->stride_w;
    int32_t ox_hi = g->input_w - span + g->pad_left <= 0
                        ? 0 : (g->input_w - span + g->pad_left - 1) / g->stride_w + 1;
    ox_hi = ox_hi < g->output_w ? ox_hi : g->output_w;
    const int8_t *in_c = input + oc / g->filter_c;
    int8_t *out = output + oc;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = in_c + (size_t)b * (size_t)g->input_h * row_stride;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy_s = first_inside(y0, g->dilation_h);
            const int32_t fy_e = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
            const int32_t lo = fy_s == 0 && fy_e == g->filter_h && ox_lo < ox_hi ? ox_lo
                                                                                  : g->output_w;
            const int32_t hi = lo < g->output_w ? ox_hi : g->output_w;
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += oc_n) {
                if (ox == lo) {
                    /* the interior of the row: every tap inside */
                    const int8_t *base = in_b + (size_t)y0 * row_stride
                                         + (size_t)(ox * g->stride_w - g->pad_left) * c;
                    if (unrolled) {
                        row_3x3(&k, base, out, hi - lo);
                    } else {
                        row_any(&k, base, out, hi - lo, bcast);
                    }
                    out += (size_t)(hi - lo) * oc_n;
                    ox = hi;
                    if (ox == g->output_w) {
                        break;
                    }
                }
                /* a border pixel: clip the taps */
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_s = first_inside(x0, g->dilation_w);
                const int32_t fx_e = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
                int32_t a0 = b0[0];
                int32_t a1 = b0[1];
                int32_t a2 = b0[2];
                int32_t a3 = b0[3];
                for (int32_t fy = fy_s; fy < fy_e; ++fy) {
                    const int8_t *row = in_b + (size_t)(y0 + fy * g->dilation_h) * row_stride;
                    for (int32_t fx = fx_s; fx < fx_e; ++fx) {
                        const int8_t *xp = row + (size_t)(x0 + fx * g->dilation_w) * c;
                        const uint32_t *wp = wx + 2 * (fy * g->filter_w + fx);
                        if (bcast) {
                            DW_TAP1(xp, wp);
                        } else {
                            DW_TAP4(xp, wp);
                        }
                    }
                }
                store4(&r, out, a0, a1, a2, a3);
            }
        }
    }
}
#endif

void nnrt_dw_fast_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &params->geom;
    int32_t toff[NNRT_DW_MAX_TAPS];
    tap_offsets(g, toff);
    int32_t oc = 0;
    while (oc < g->output_c) {
#if NNRT_DSP
        /* four output channels on one input word (m == 1) or one input (m % 4 == 0) */
        const int32_t m = g->filter_c;
        if ((m == 1 && oc + 4 <= g->output_c) || (m % 4 == 0 && oc % m + 4 <= m)) {
            group4(params, input, filter, bias, output, oc, toff);
            oc += 4;
            continue;
        }
#endif
        channel1(params, input, filter, bias, output, oc, toff);
        ++oc;
    }
}
