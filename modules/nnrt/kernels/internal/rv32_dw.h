/*
 * Internal to the nnrt kernels: the int8 depthwise convolution (internal/nnrt_dw_s8.c)
 * on RV32IM, a core without SIMD (NNRT_RV32, internal/simd.h).
 *
 * Interior pixels of a 3x3 undilated filter, depth multiplier 1
 * (nnrt_rv_dw_group4_3x3()): four neighbouring channels at a time (contiguous in the
 * input, the filter and the output). The portable path runs one channel at a time with
 * its nine weights in registers, which with the run's pointers, strides and output stage
 * leaves RV32's registers short: GCC reloaded the weights from the stack, 75 instructions
 * an output (8.3 a MAC). Here the 36 weights of the group sit in a 36-byte stack copy
 * (one LB each at an immediate offset), the input offset is folded into the start values
 * (bias + input offset * sum of the channel's weights, exact in wrapping arithmetic), and
 * per output pixel 8 additions find the nine taps for all four channels: per MAC LB, LB,
 * MUL, ADD (about 4.2 a MAC), then the four outputs' requantisation.
 *
 * Border pixels (nnrt_rv_dw_borders(), windows that cross the input's edge):
 * the portable border loop takes one channel at a time through a list of the taps inside
 * the window (two table loads and an indexed address per tap: about 10 instructions a
 * MAC on RV32), which on small maps is most of the op (a 6 x 6 map: 20 of 36 pixels;
 * person_detect's 6 x 6 and 3 x 3 depthwise ops ran at 12-17 instructions a MAC). Here,
 * per border pixel, the rectangle of taps inside is found once and four neighbouring
 * channels (contiguous in the input, the filter and the output) run through it
 * together: per tap and channel LB, ADD (input offset), LB, MUL, ADD, the tap loop's
 * pointer steps shared by the four. Other depth multipliers one channel at a time
 * through the same rectangle.
 *
 * Bit-exact with the portable loop: the same exact int32 sums, the same output stage.
 */
#ifndef NNRT_KERNELS_INTERNAL_RV32_DW_H_
#define NNRT_KERNELS_INTERNAL_RV32_DW_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "requant.h"
#include "simd.h"
#include "window.h"

#if NNRT_RV32

/* Channel oc's output of sum acc (bias included): requantised, offset, clamped. */
static NNRT_ALWAYS_INLINE int8_t nnrt_rv_dw_out(const nnrt_conv_s8_params_t *p, int32_t oc,
                                                int32_t acc)
{
    const int32_t qi = p->per_channel ? oc : 0;
    const int32_t e = -p->shift[qi] - 2; /* fast form: e in [0, 29] */
    int32_t v;
    if ((uint32_t)e <= 29u) {
        v = nnrt_rqf_fast(acc, p->multiplier[qi], 1 << e, e + 1) + p->output_offset;
    } else {
        v = nnrt_rq_ref(acc, p->multiplier[qi], p->shift[qi], p->output_offset);
    }
    return nnrt_act8(v, p->act_min, p->act_max);
}

/*
 * Channels oc .. oc + 3 (depth multiplier 1, 3x3 undilated filter), every output pixel
 * whose window lies inside the input: columns [lo, hi) of the rows with rows_in (the
 * pixels nnrt_rv_dw_borders() leaves).
 */
static NNRT_NOINLINE void nnrt_rv_dw_group4_3x3(const nnrt_conv_s8_params_t *p,
                                                const int8_t *input, const int8_t *filter,
                                                const int32_t *bias, int8_t *output,
                                                int32_t oc, int32_t lo, int32_t hi)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t c = (size_t)g->input_c;
    const size_t rs = (size_t)g->input_w * c;
    const size_t x_step = (size_t)g->stride_w * c;
    int8_t wl[36]; /* tap t, channel j at 4 t + j */
    uint32_t start[4];
    nnrt_rqf_t q[4];
    for (int32_t j = 0; j < 4; ++j) {
        uint32_t sw = 0;
        for (int32_t t = 0; t < 9; ++t) {
            wl[4 * t + j] = filter[(size_t)t * c + (size_t)(oc + j)];
            sw += (uint32_t)(int32_t)wl[4 * t + j];
        }
        start[j] = (uint32_t)(bias != NULL ? bias[oc + j] : 0) + (uint32_t)p->input_offset * sw;
        const int32_t qi = p->per_channel ? oc + j : 0;
        nnrt_rqf_init(&q[j], p->multiplier[qi], p->shift[qi]);
    }
    const int32_t out_off = p->output_offset;
    const int32_t act_lo = p->act_min;
    const int32_t act_hi = p->act_max;
    /* the output offset folded into the rounding addend where requant.h's
     * nnrt_rq_fold() takes the channel (fast form, rsh >= 2, addend within +-2^30) */
    int32_t rm[4];
    int32_t ra[4];
    int32_t rr[4];
    int fold = 1;
    for (int32_t j = 0; j < 4; ++j) {
        const int64_t ad = q[j].fast ? (int64_t)q[j].half + (int64_t)out_off * ((int64_t)1 << q[j].rsh)
                                     : 0;
        fold = fold && q[j].fast && q[j].rsh >= 2 && ad >= -((int64_t)1 << 30)
               && ad <= ((int64_t)1 << 30);
        rm[j] = q[j].mult;
        ra[j] = (int32_t)ad;
        rr[j] = q[j].rsh;
    }
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * (size_t)g->input_h * rs + (size_t)oc;
        int8_t *out_b = output + (size_t)b * (size_t)g->output_h * (size_t)g->output_w * c
                        + (size_t)oc;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            if (y0 < 0 || y0 + 2 >= g->input_h || lo >= hi) {
                continue;
            }
            const int8_t *r0 = in_b + (size_t)y0 * rs + (size_t)(lo * g->stride_w - g->pad_left) * c;
            int8_t *o = out_b + ((size_t)oy * (size_t)g->output_w + (size_t)lo) * c;
            int8_t *const o_end = o + (size_t)(hi - lo) * c;
            for (; o != o_end; o += c, r0 += x_step) {
                uint32_t a0 = start[0], a1 = start[1], a2 = start[2], a3 = start[3];
                const int8_t *r = r0;
                const int8_t *w = wl;
#if defined(__GNUC__)
                /* w's value hidden from GCC: the 36 weight loads stay in the loop (hoisted
                 * into registers they spilled: 46 stores to the stack a pixel) */
                __asm__("" : "+r"(w));
#endif
#pragma GCC unroll 3
                for (int32_t ty = 0; ty < 3; ++ty, r += rs) {
                    const int8_t *x = r;
#pragma GCC unroll 3
                    for (int32_t tx = 0; tx < 3; ++tx, x += c, w += 4) {
                        a0 += (uint32_t)((int32_t)w[0] * (int32_t)x[0]);
                        a1 += (uint32_t)((int32_t)w[1] * (int32_t)x[1]);
                        a2 += (uint32_t)((int32_t)w[2] * (int32_t)x[2]);
                        a3 += (uint32_t)((int32_t)w[3] * (int32_t)x[3]);
#if defined(__GNUC__)
                        /* each tap's loads with it: GCC's scheduler hoists all 72 and
                         * spills (the same in internal/rv32_gemm.h) */
                        __asm__ volatile("" ::: "memory");
#endif
                    }
                }
                const uint32_t acc[4] = {a0, a1, a2, a3};
                if (fold) {
#pragma GCC unroll 4
                    for (int32_t j = 0; j < 4; ++j) {
                        o[j] = nnrt_act8(nnrt_rq_fold((int32_t)acc[j], rm[j], ra[j], rr[j]),
                                         act_lo, act_hi);
                    }
                    continue;
                }
                for (int32_t j = 0; j < 4; ++j) { /* one copy of the output stage */
                    o[j] = nnrt_act8(nnrt_rqf((int32_t)acc[j], &q[j], out_off), act_lo, act_hi);
                }
            }
        }
    }
}

/*
 * Every output pixel outside [lo, hi) x the rows whose windows lie inside the input
 * (the pixels the interior runs leave), all channels.
 */
static NNRT_NOINLINE void nnrt_rv_dw_borders(const nnrt_conv_s8_params_t *p,
                                             const int8_t *input, const int8_t *filter,
                                             const int32_t *bias, int8_t *output, int32_t lo,
                                             int32_t hi)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t ci = g->input_c;
    const int32_t c = g->output_c; /* ci * the depth multiplier m */
    const int32_t m = g->filter_c;
    const int32_t in_off = p->input_offset;
    const size_t x_tap = (size_t)g->dilation_w * (size_t)ci;           /* input, along x */
    const size_t y_tap = (size_t)g->dilation_h * (size_t)g->input_w * (size_t)ci;
    const size_t w_row = (size_t)g->filter_w * (size_t)c;              /* filter, along y */
    int8_t *out = output;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * (size_t)g->input_h * (size_t)g->input_w * (size_t)ci;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int rows_in = y0 >= 0 && y0 + (g->filter_h - 1) * g->dilation_h < g->input_h;
            const int32_t fy_s = first_inside(y0, g->dilation_h);
            const int32_t ny = end_inside(y0, g->dilation_h, g->input_h, g->filter_h) - fy_s;
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += c) {
                if (rows_in && ox >= lo && ox < hi) {
                    continue;
                }
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_s = first_inside(x0, g->dilation_w);
                const int32_t nx = end_inside(x0, g->dilation_w, g->input_w, g->filter_w) - fx_s;
                if (ny <= 0 || nx <= 0) { /* no tap inside: the bias alone */
                    for (int32_t oc = 0; oc < c; ++oc) {
                        out[oc] = nnrt_rv_dw_out(p, oc, bias != NULL ? bias[oc] : 0);
                    }
                    continue;
                }
                const int8_t *x_first = in_b + ((size_t)(y0 + fy_s * g->dilation_h) * (size_t)g->input_w
                                                + (size_t)(x0 + fx_s * g->dilation_w)) * (size_t)ci;
                const int8_t *w_first = filter + ((size_t)fy_s * (size_t)g->filter_w + (size_t)fx_s) * (size_t)c;
                int32_t oc = 0;
                for (; m == 1 && oc + 4 <= c; oc += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    if (bias != NULL) {
                        a0 = bias[oc];
                        a1 = bias[oc + 1];
                        a2 = bias[oc + 2];
                        a3 = bias[oc + 3];
                    }
                    const int8_t *xr = x_first + oc;
                    const int8_t *wr = w_first + oc;
                    for (int32_t y = 0; y < ny; ++y, xr += y_tap, wr += w_row) {
                        const int8_t *xp = xr;
                        const int8_t *wp = wr;
                        for (int32_t x = 0; x < nx; ++x, xp += x_tap, wp += c) {
                            a0 += (int32_t)wp[0] * ((int32_t)xp[0] + in_off);
                            a1 += (int32_t)wp[1] * ((int32_t)xp[1] + in_off);
                            a2 += (int32_t)wp[2] * ((int32_t)xp[2] + in_off);
                            a3 += (int32_t)wp[3] * ((int32_t)xp[3] + in_off);
                        }
                    }
                    const int32_t acc[4] = {a0, a1, a2, a3};
                    for (int32_t i = 0; i < 4; ++i) { /* one copy of the output stage */
                        out[oc + i] = nnrt_rv_dw_out(p, oc + i, acc[i]);
                    }
                }
                for (; oc < c; ++oc) { /* the c % 4 last channels, or m > 1 */
                    int32_t a0 = bias != NULL ? bias[oc] : 0;
                    const int8_t *xr = x_first + (m == 1 ? oc : oc / m);
                    const int8_t *wr = w_first + oc;
                    for (int32_t y = 0; y < ny; ++y, xr += y_tap, wr += w_row) {
                        for (int32_t x = 0; x < nx; ++x) {
                            a0 += (int32_t)wr[(size_t)x * (size_t)c]
                                  * ((int32_t)xr[(size_t)x * x_tap] + in_off);
                        }
                    }
                    out[oc] = nnrt_rv_dw_out(p, oc, a0);
                }
            }
        }
    }
}

#endif /* NNRT_RV32 */

#endif /* NNRT_KERNELS_INTERNAL_RV32_DW_H_ */
