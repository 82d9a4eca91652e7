/*
 * int8 depthwise convolution in place, NNRT_DW_INPLACE_GROUP channels at a time through
 * a ring of output rows in scratch (inplace.h). Arithmetic of TFLM's reference
 * DepthwiseConvPerChannel (taps outside the input skipped, exact int32 sums).
 *
 * DSP cores, groups of 4 channels: the group's weights of every tap sign-extended once
 * into the int16 pairs [w0 w2] [w1 w3], its requantisation prepared once; per output
 * pixel one 32-bit input word per tap, SXTAB16 adding the input offset, four
 * SMLABB / SMLATT (the scheme of internal/nnrt_dw_s8.c, whose interface takes whole
 * tensors only); 3x3 undilated windows inside the input unrolled. The 4 outputs go to
 * the row's ring slot as one word; a row is stored over the group's channels as soon
 * as no row still to compute reads the input it overlays. 3x3 undilated groups with
 * stride_w 1 or 2 take the classic kernel's plane path (internal/dw_plane.h) instead:
 * when every input line the group reads fits the plane buffer, all are converted (a
 * copy) before any output goes over the buffer; otherwise, for rows of one strip, runs
 * of output rows go through the scratch ring, each row stored once the input lines it
 * overlays are converted or no longer read.
 * Other cores, and the last C % 4 channels: one channel at a time in portable C.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/inplace.h"
#include "nnrt/kernels/quant.h"

#include "../internal/dw_plane.h"
#include "../internal/requant.h"
#include "../internal/simd.h"

/* Largest KH * KW of the grouped path (its extended weights live on the stack). */
#define INPLACE_MAX_TAPS 25

/* First k >= 0 with origin + k * step >= 0 (origin may be negative). */
static int32_t first_tap(int32_t origin, int32_t step)
{
    return origin >= 0 ? 0 : (-origin + step - 1) / step;
}

/* One past the last k with origin + k * step < size, capped at taps. */
static int32_t end_tap(int32_t origin, int32_t step, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t n = (size - origin + step - 1) / step;
    return n < taps ? n : taps;
}

#if NNRT_DSP
/* Output row oy of channel c of one batch into out[ox * stride]. */
static void row1(const nnrt_conv_s8_params_t *p, const int8_t *in_b, const int8_t *filter,
                 const int32_t *bias, int32_t c, int32_t oy, int8_t *out, size_t stride)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t ch = (size_t)g->input_c;
    const int32_t qi = p->per_channel ? c : 0;
    const int32_t mult = p->multiplier[qi];
    const int32_t shift = p->shift[qi];
    const int32_t b = bias != NULL ? bias[c] : 0;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t fy0 = first_tap(y0, g->dilation_h);
    const int32_t fy1 = end_tap(y0, g->dilation_h, g->input_h, g->filter_h);
    for (int32_t ox = 0; ox < g->output_w; ++ox) {
        const int32_t x0 = ox * g->stride_w - g->pad_left;
        const int32_t fx0 = first_tap(x0, g->dilation_w);
        const int32_t fx1 = end_tap(x0, g->dilation_w, g->input_w, g->filter_w);
        int32_t acc = 0;
        for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int32_t y = y0 + fy * g->dilation_h;
            const int8_t *row = in_b + (size_t)y * (size_t)g->input_w * ch + (size_t)c;
            const int8_t *w = filter + (size_t)fy * (size_t)g->filter_w * ch + (size_t)c;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
                const int32_t x = x0 + fx * g->dilation_w;
                acc += (int32_t)w[(size_t)fx * ch] * ((int32_t)row[(size_t)x * ch]
                                                      + p->input_offset);
            }
        }
        acc += b;
        acc = nnrt_multiply_by_quantized_multiplier(acc, mult, shift);
        acc = nnrt_clamp_i32(acc + p->output_offset, p->act_min, p->act_max);
        out[(size_t)ox * stride] = (int8_t)acc;
    }
}
#else
/* Portable builds (every channel comes here): */
/* Output row oy of channel c of one batch into out[ox * stride]. 3x3 undilated windows
 * inside the input: unrolled, the input offset folded into the start value (exact in
 * wrapping uint32 arithmetic like the per-tap sum). */
static void row1(const nnrt_conv_s8_params_t *p, const int8_t *in_b, const int8_t *filter,
                 const int32_t *bias, int32_t c, int32_t oy, int8_t *out, size_t stride)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t ch = (size_t)g->input_c;
    const int32_t qi = p->per_channel ? c : 0;
    nnrt_rqf_t q;
    nnrt_rqf_init(&q, p->multiplier[qi], p->shift[qi]);
    const int32_t b = bias != NULL ? bias[c] : 0;
    const int32_t in_off = p->input_offset;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t fy0 = first_tap(y0, g->dilation_h);
    const int32_t fy1 = end_tap(y0, g->dilation_h, g->input_h, g->filter_h);
    const int k3 = g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1
                   && g->dilation_w == 1 && fy0 == 0 && fy1 == 3;
    uint32_t w3[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint32_t start = (uint32_t)b;
    if (k3) {
        for (size_t t = 0; t < 9; ++t) {
            w3[t] = (uint32_t)(int32_t)filter[t * ch + (size_t)c];
            start += (uint32_t)in_off * w3[t];
        }
    }
    const size_t rs = (size_t)g->input_w * ch;
    for (int32_t ox = 0; ox < g->output_w; ++ox) {
        const int32_t x0 = ox * g->stride_w - g->pad_left;
        const int32_t fx0 = first_tap(x0, g->dilation_w);
        const int32_t fx1 = end_tap(x0, g->dilation_w, g->input_w, g->filter_w);
        int32_t acc;
        if (k3 && fx0 == 0 && fx1 == 3) {
            const int8_t *r = in_b + (size_t)y0 * rs + (size_t)x0 * ch + (size_t)c;
            uint32_t u = start + w3[0] * (uint32_t)(int32_t)r[0]
                         + w3[1] * (uint32_t)(int32_t)r[ch] + w3[2] * (uint32_t)(int32_t)r[2 * ch];
            r += rs;
            u += w3[3] * (uint32_t)(int32_t)r[0] + w3[4] * (uint32_t)(int32_t)r[ch]
                 + w3[5] * (uint32_t)(int32_t)r[2 * ch];
            r += rs;
            u += w3[6] * (uint32_t)(int32_t)r[0] + w3[7] * (uint32_t)(int32_t)r[ch]
                 + w3[8] * (uint32_t)(int32_t)r[2 * ch];
            acc = (int32_t)u;
        } else {
            acc = 0;
            for (int32_t fy = fy0; fy < fy1; ++fy) {
                const int32_t y = y0 + fy * g->dilation_h;
                const int8_t *row = in_b + (size_t)y * rs + (size_t)c;
                const int8_t *w = filter + (size_t)fy * (size_t)g->filter_w * ch + (size_t)c;
                for (int32_t fx = fx0; fx < fx1; ++fx) {
                    const int32_t x = x0 + fx * g->dilation_w;
                    acc += (int32_t)w[(size_t)fx * ch] * ((int32_t)row[(size_t)x * ch] + in_off);
                }
            }
            acc += b;
        }
        out[(size_t)ox * stride] = nnrt_act8(nnrt_rqf(acc, &q, p->output_offset), p->act_min,
                                             p->act_max);
    }
}
#endif

#if NNRT_DSP
/* Everything the pixels of one group of 4 channels share. */
typedef struct {
    uint32_t wx[2 * INPLACE_MAX_TAPS]; /* per tap: [w0 w2], [w1 w3] */
    int32_t toff[INPLACE_MAX_TAPS];    /* byte offsets of all taps from the window origin */
    nnrt_rqf_t q[4];
    int32_t b[4];
    uint32_t off2;                     /* input offset in both halfwords */
    int32_t fast;                      /* every channel in the fast requantisation */
    int32_t full;                      /* the activation range is all of int8 */
} group_t;

#define TAP4(ptr, wp)                                                                         \
    do {                                                                                      \
        const uint32_t xv_ = nnrt_ld32(ptr);                                                  \
        const uint32_t xe_ = __sxtab16(k->off2, xv_);                                         \
        const uint32_t xo_ = nnrt_sxtab16_ror8(k->off2, xv_);                                 \
        a0 = __smlabb(xe_, (wp)[0], a0);                                                      \
        a2 = __smlatt(xe_, (wp)[0], a2);                                                      \
        a1 = __smlabb(xo_, (wp)[1], a1);                                                      \
        a3 = __smlatt(xo_, (wp)[1], a3);                                                      \
    } while (0)

/* One output of the group: requantised, offset, clamped (fast form or reference). */
static NNRT_ALWAYS_INLINE uint32_t out1(const group_t *k, const nnrt_conv_s8_params_t *p,
                                        int32_t i, int32_t a)
{
    int32_t v;
    if (k->fast) {
        v = nnrt_sat8(nnrt_rqf_fast(a, k->q[i].mult, k->q[i].half, k->q[i].rsh)
                      + p->output_offset);
        if (!k->full) {
            v = nnrt_act8(v, p->act_min, p->act_max);
        }
    } else {
        v = nnrt_act8(nnrt_rqf(a, &k->q[i], p->output_offset), p->act_min, p->act_max);
    }
    return (uint32_t)v & 0xFFu;
}

/* The 4 outputs as one little-endian word. */
static NNRT_ALWAYS_INLINE uint32_t pack4(const group_t *k, const nnrt_conv_s8_params_t *p,
                                         int32_t a0, int32_t a1, int32_t a2, int32_t a3)
{
    return out1(k, p, 0, a0) | (out1(k, p, 1, a1) << 8) | (out1(k, p, 2, a2) << 16)
           | (out1(k, p, 3, a3) << 24);
}

/* n pixels whose 3x3 undilated windows lie inside the input, from r (window origin). */
static NNRT_NOINLINE void run3x3(const nnrt_conv_s8_params_t *p, const group_t *k,
                                 const int8_t *r, size_t step, uint8_t *out, int32_t n)
{
    const size_t ch = (size_t)p->geom.input_c;
    const size_t rs = (size_t)p->geom.input_w * ch;
    const uint32_t *wx = k->wx;
    for (int32_t i = 0; i < n; ++i, r += step, out += 4) {
        int32_t a0 = k->b[0];
        int32_t a1 = k->b[1];
        int32_t a2 = k->b[2];
        int32_t a3 = k->b[3];
        const int8_t *q = r;
        TAP4(q, wx);
        TAP4(q + ch, wx + 2);
        TAP4(q + 2 * ch, wx + 4);
        q += rs;
        TAP4(q, wx + 6);
        TAP4(q + ch, wx + 8);
        TAP4(q + 2 * ch, wx + 10);
        q += rs;
        TAP4(q, wx + 12);
        TAP4(q + ch, wx + 14);
        TAP4(q + 2 * ch, wx + 16);
        nnrt_st32(out, pack4(k, p, a0, a1, a2, a3));
    }
}

/* The shared part of channels [c0, c0 + 4). */
static void prep4(const nnrt_conv_s8_params_t *p, const int8_t *filter, const int32_t *bias,
                  int32_t c0, group_t *k)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t ch = (size_t)g->input_c;
    const int32_t taps = g->filter_h * g->filter_w;
    for (int32_t t = 0; t < taps; ++t) {
        const uint32_t wv = nnrt_ld32(filter + (size_t)t * ch + (size_t)c0);
        k->wx[2 * t] = __sxtb16(wv);
        k->wx[2 * t + 1] = nnrt_sxtb16_ror8(wv);
        k->toff[t] = ((t / g->filter_w) * g->dilation_h * g->input_w
                      + (t % g->filter_w) * g->dilation_w) * (int32_t)ch;
    }
    k->fast = 1;
    for (int32_t i = 0; i < 4; ++i) {
        const int32_t qi = p->per_channel ? c0 + i : 0;
        nnrt_rqf_init(&k->q[i], p->multiplier[qi], p->shift[qi]);
        k->fast &= k->q[i].fast;
        k->b[i] = bias != NULL ? bias[c0 + i] : 0;
    }
    k->off2 = nnrt_pair16(p->input_offset);
    k->full = p->act_min == INT8_MIN && p->act_max == INT8_MAX;
}

/* Output row oy of the group (input channels from in_c) into out, 4 bytes per pixel. */
static void row4(const nnrt_conv_s8_params_t *p, const group_t *k, const int8_t *in_c,
                 int32_t oy, uint8_t *out)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t ch = (size_t)g->input_c;
    const int32_t taps = g->filter_h * g->filter_w;
    const int unrolled = g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1
                         && g->dilation_w == 1;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t fy0 = first_tap(y0, g->dilation_h);
    const int32_t fy1 = end_tap(y0, g->dilation_h, g->input_h, g->filter_h);
    /* output columns [lo, hi) whose windows lie inside the input's width */
    const int32_t span = (g->filter_w - 1) * g->dilation_w;
    const int32_t last = g->input_w - 1 - span + g->pad_left; /* largest ox * stride_w */
    const int32_t lo = (g->pad_left + g->stride_w - 1) / g->stride_w;
    int32_t hi = last < 0 ? 0 : last / g->stride_w + 1;
    hi = hi < g->output_w ? hi : g->output_w;
    hi = hi > lo ? hi : lo;
    const int rows_in = fy0 == 0 && fy1 == g->filter_h;
    for (int32_t ox = 0; ox < g->output_w; ++ox, out += 4) {
        const int32_t x0 = ox * g->stride_w - g->pad_left;
        if (rows_in && ox == lo && lo < hi) {
            const int8_t *r = in_c + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * ch;
            const size_t step = (size_t)g->stride_w * ch;
            if (unrolled) {
                run3x3(p, k, r, step, out, hi - lo);
            } else {
                uint8_t *o = out;
                for (int32_t i = lo; i < hi; ++i, r += step, o += 4) {
                    int32_t a0 = k->b[0];
                    int32_t a1 = k->b[1];
                    int32_t a2 = k->b[2];
                    int32_t a3 = k->b[3];
                    for (int32_t t = 0; t < taps; ++t) {
                        TAP4(r + k->toff[t], k->wx + 2 * t);
                    }
                    nnrt_st32(o, pack4(k, p, a0, a1, a2, a3));
                }
            }
            out += (size_t)(hi - lo - 1) * 4;
            ox = hi - 1;
            continue;
        }
        const int32_t fx0 = first_tap(x0, g->dilation_w);
        const int32_t fx1 = end_tap(x0, g->dilation_w, g->input_w, g->filter_w);
        int32_t a0 = k->b[0];
        int32_t a1 = k->b[1];
        int32_t a2 = k->b[2];
        int32_t a3 = k->b[3];
        for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int32_t y = y0 + fy * g->dilation_h;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
                const int32_t x = x0 + fx * g->dilation_w;
                TAP4(in_c + ((size_t)y * (size_t)g->input_w + (size_t)x) * ch,
                     k->wx + 2 * (fy * g->filter_w + fx));
            }
        }
        nnrt_st32(out, pack4(k, p, a0, a1, a2, a3));
    }
}
#endif

/* An output row of a group of 4 channels, from its ring slot, stored over the buffer. */
static void store_row(const int8_t *slot, int8_t *dst, size_t ow, size_t ch)
{
    for (size_t x = 0; x < ow; ++x) {
        nnrt_st32(dst + x * ch, nnrt_ld32(slot + 4 * x));
    }
}

#if NNRT_DW_PLANE
/* Channels [c0, c0 + 4) of one batch (in_b, out_b: its input and output at channel c0)
 * through the plane path (internal/dw_plane.h); 0 when a channel is outside it. `whole`:
 * every input line the group reads fits the plane buffer, converted before any output
 * is written, so the outputs go straight over the buffer (view v, maybe transposed).
 * Otherwise (v along rows, one strip) runs of output rows go to the scratch ring and
 * each row is stored over the buffer once no input line still to convert lies under
 * it. */
static int plane_group(const nnrt_conv_s8_params_t *p, const nnrt_dwp_view_t *v, int whole,
                       uint32_t *buf, const int8_t *filter, const int32_t *bias, int32_t c0,
                       const int8_t *in_b, int8_t *out_b, int8_t *scratch, int32_t ring)
{
    const nnrt_conv_geom_t *g = &p->geom;
    nnrt_dwp_ch_t ch[4];
    if (nnrt_dwp_channels(ch, v, p, filter, bias, c0, 4) != 0) {
        return 0;
    }
    if (whole) {
        nnrt_dwp_pass(v, buf, ch, 4, 4, in_b, out_b, -p->input_offset);
        return 1;
    }
    const size_t ow = (size_t)g->output_w;
    const size_t c = (size_t)g->input_c;
    nnrt_dwp_ring_t r;
    nnrt_dwp_job_t j;
    nnrt_dwp_ring(&r, v, buf, in_b, 4, -p->input_offset);
    nnrt_dwp_strip(&r, &j, 0, g->output_w);
    j.step = 4; /* ring slots: 4 channels per pixel, rows one after the other */
    j.o_next = 0;
    int32_t done = 0;
    for (int32_t ol = 0; ol < g->output_h;) {
        int32_t k = g->output_h - ol;
        k = k < ring - (ol - done) ? k : ring - (ol - done);
        k = k < ring - ol % ring ? k : ring - ol % ring;
        nnrt_dwp_lines(&r, &j, ol, k);
        j.out = scratch + (size_t)(ol % ring) * ow * 4;
        j.nch = 4;
        j.ch = ch;
        nnrt_dwp_run(&j, v->s);
        ol += j.rows;
        /* input rows below `bound` are converted or never read again */
        int32_t bound = v->first + r.filled;
        const int32_t next = ol * g->stride_h - g->pad_top;
        bound = ol == g->output_h ? INT32_MAX : (bound > next ? bound : next);
        while (done < ol && ((done + 1) * g->output_w - 1) / g->input_w < bound) {
            store_row(scratch + (size_t)(done % ring) * ow * 4, out_b + (size_t)done * ow * c,
                      ow, c);
            ++done;
        }
    }
    return 1;
}
#endif

nnrt_status_t nnrt_depthwise_conv2d_inplace_s8(const nnrt_conv_s8_params_t *params,
                                               int8_t *buffer, const int8_t *filter,
                                               const int32_t *bias, int8_t *scratch)
{
    if (params == NULL || buffer == NULL || filter == NULL || scratch == NULL
        || params->multiplier == NULL || params->shift == NULL || params->pool != NULL
        || !nnrt_conv_geom_valid(&params->geom, NULL, 1) || params->geom.filter_c != 1
        || (int64_t)params->geom.output_h * params->geom.output_w
               > (int64_t)params->geom.input_h * params->geom.input_w
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max || params->output_offset < INT8_MIN
        || params->output_offset > INT8_MAX || params->input_offset < -INT8_MAX
        || params->input_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const size_t ch = (size_t)g->input_c;
    const size_t ow = (size_t)g->output_w;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * ch;
    const size_t out_pixels = (size_t)g->output_h * ow;
    const int32_t ring = nnrt_depthwise_conv2d_inplace_s8_rows(g);
#if NNRT_DSP
    group_t k;
    const int grouped_taps = g->filter_h * g->filter_w <= INPLACE_MAX_TAPS;
#endif
#if NNRT_DW_PLANE
    /* the plane path: every line of a group converted first (any view), or runs of
     * output rows through the scratch ring (rows of one strip) */
    uint32_t pbuf[NNRT_DWP_WORDS];
    nnrt_dwp_view_t pv;
    int whole = 0;
    int plane = 0;
    if (grouped_taps && nnrt_dwp_view(&pv, g, 1) && pv.asm3) {
        whole = nnrt_dwp_converts_first(&pv, 4);
        plane = whole
                || (nnrt_dwp_view(&pv, g, 0) && pv.asm3
                    && g->output_w <= nnrt_dwp_per_strip(&pv, 4));
    }
#endif
    for (int32_t b = 0; b < g->batches; ++b) {
        int8_t *out_b = buffer + (size_t)b * out_pixels * ch;
        const int8_t *in_b = buffer + (size_t)b * in_batch;
        for (int32_t c0 = 0; c0 < g->input_c; c0 += NNRT_DW_INPLACE_GROUP) {
            /* Batch b's input lies at or after its output; the group's channels are
             * intact: earlier groups wrote other channels only. */
            const int32_t left = g->input_c - c0;
            const size_t n = (size_t)(left < NNRT_DW_INPLACE_GROUP ? left
                                                                   : NNRT_DW_INPLACE_GROUP);
#if NNRT_DW_PLANE
            if (n == 4 && plane
                && plane_group(params, &pv, whole, pbuf, filter, bias, c0, in_b + c0,
                               out_b + c0, scratch, ring)) {
                continue;
            }
#endif
#if NNRT_DSP
            const int simd = n == 4 && grouped_taps;
            if (simd) {
                prep4(params, filter, bias, c0, &k);
            }
#endif
            int32_t done = 0; /* rows stored over the buffer */
            for (int32_t oy = 0; oy <= g->output_h; ++oy) {
                /* store the rows whose overlaid input no row from oy on reads */
                const int32_t first = oy < g->output_h ? oy * g->stride_h - g->pad_top
                                                       : INT32_MAX;
                while (done < oy && ((done + 1) * g->output_w - 1) / g->input_w < first) {
                    const int8_t *slot = scratch + (size_t)(done % ring) * ow * n;
                    int8_t *dst = out_b + (size_t)done * ow * ch + (size_t)c0;
                    if (n == 4) {
                        store_row(slot, dst, ow, ch);
                    } else {
                        for (size_t x = 0; x < ow; ++x) {
                            for (size_t i = 0; i < n; ++i) {
                                dst[x * ch + i] = slot[x * n + i];
                            }
                        }
                    }
                    ++done;
                }
                if (oy == g->output_h) {
                    break;
                }
                int8_t *slot = scratch + (size_t)(oy % ring) * ow * n;
#if NNRT_DSP
                if (simd) {
                    row4(params, &k, in_b + c0, oy, (uint8_t *)slot);
                    continue;
                }
#endif
                for (size_t i = 0; i < n; ++i) {
                    row1(params, in_b, filter, bias, c0 + (int32_t)i, oy, slot + i, n);
                }
            }
        }
    }
#if NNRT_DW_PLANE
    if (plane && (params->act_min != INT8_MIN || params->act_max != INT8_MAX)) {
        /* the plane path stores bytes clamped to int8 only */
        nnrt_dwp_clamp(buffer, (size_t)g->batches * out_pixels * ch, params->act_min,
                       params->act_max);
    }
#endif
    return NNRT_OK;
}
