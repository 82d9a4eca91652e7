/*
 * Internal to the nnrt kernels: the Helium (MVE) int8 depthwise convolution, depth
 * multiplier 1 (nnrt_dw_fast_s8() of internal/nnrt_dw_s8.c offers it every call first
 * on MVE cores), compiled only where NNRT_MVE (internal/mve.h).
 *
 * Channels-last, 4 channels per int32 vector, channel groups the outer loop. Per group
 * once: the group's weights widened to int32 in a stack array (16 bytes a tap: one
 * post-incremented VLDRW per tap afterwards), the biases plus input offset times the
 * sum of the weights over all taps (the start value of a pixel whose window lies inside
 * the input: sum w (x + off) = sum w x + off sum w, exact in wrapping int32) and the
 * requantisation vectors. Per tap then one widening load of 4 inputs (VLDRB.S32), the
 * weight vector, VMUL and VADD (MVE's VMLA takes a scalar). Border pixels add the offset
 * to each input and skip the taps outside, as TFLM's reference does. Output stage:
 * nnrt_mve_rq() of internal/mve_gemm.h (TFLM's two steps). Channel counts that are
 * multiples of 4 only (every depthwise op of the anchors).
 */
#ifndef NNRT_KERNELS_INTERNAL_MVE_DW_H_
#define NNRT_KERNELS_INTERNAL_MVE_DW_H_

#include "mve.h"

#if NNRT_MVE
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "mve_gemm.h"
#include "simd.h"

/* Most taps the Helium path takes (its weight vectors are on the stack: 16 B a tap). */
#define NNRT_MVE_DW_MAX_TAPS 25

/* One pixel whose window lies inside the input: start + sum of the taps, x raw. A 3x3
 * window unrolled (the weight vectors at immediate offsets). */
static NNRT_ALWAYS_INLINE int32x4_t nnrt_mve_dw_inside(const int8_t *px, const int32_t *wl,
                                                       int32x4_t acc, int32_t kh, int32_t kw,
                                                       size_t row_step, size_t tap_step)
{
    if (kh == 3 && kw == 3) {
        const int8_t *r1 = px + row_step;
        const int8_t *r2 = r1 + row_step;
        const size_t t2 = 2 * tap_step;
#define NNRT_MVE_DW_TAP(p, t) acc = vaddq_s32(acc, vmulq_s32(vldrbq_s32(p), vldrwq_s32(wl + 4 * (t))))
        NNRT_MVE_DW_TAP(px, 0);
        NNRT_MVE_DW_TAP(px + tap_step, 1);
        NNRT_MVE_DW_TAP(px + t2, 2);
        NNRT_MVE_DW_TAP(r1, 3);
        NNRT_MVE_DW_TAP(r1 + tap_step, 4);
        NNRT_MVE_DW_TAP(r1 + t2, 5);
        NNRT_MVE_DW_TAP(r2, 6);
        NNRT_MVE_DW_TAP(r2 + tap_step, 7);
        NNRT_MVE_DW_TAP(r2 + t2, 8);
#undef NNRT_MVE_DW_TAP
        return acc;
    }
    for (int32_t fy = 0; fy < kh; ++fy, px += row_step) {
        const int8_t *r = px;
        for (int32_t fx = 0; fx < kw; ++fx, r += tap_step, wl += 4) {
            acc = vaddq_s32(acc, vmulq_s32(vldrbq_s32(r), vldrwq_s32(wl)));
        }
    }
    return acc;
}

#if defined(__OPTIMIZE__)
/*
 * n >= 1 neighbouring pixels of a row whose 3x3 windows lie inside the input, in
 * assembly (GCC 12 spilled the vectors of the same C to the stack): per tap VLDRB.S32,
 * VLDRW (the weight vector at an immediate offset), VMUL, VADD, the next tap's address
 * by ADD (the widening loads and stores take r0-r7: "l"); then nnrt_mve_rq() with its
 * vectors in registers, and VSTRB.32. px: the first pixel's top-left input
 * of the group, out its output; steps in bytes.
 */
static NNRT_NOINLINE void nnrt_mve_dw_run3x3(const int8_t *px, int8_t *out, int32_t n,
                                             const int32_t *wl, const int32_t *consts,
                                             const int32_t *steps)
{
    /* consts: start[4] m[4] lsh[4] e[4] lo[4] out_off hi; steps: row, tap, pixel, channel */
    const int32_t rs = steps[0];
    const int32_t ts = steps[1];
    const int32_t ps = steps[2];
    const int32_t cs = steps[3];
    const int32_t oo = consts[20];
    const int32_t hi = consts[21];
    const int32x4_t start = vldrwq_s32(consts);
    const int32x4_t m = vldrwq_s32(consts + 4);
    const int32x4_t lsh = vldrwq_s32(consts + 8);
    const int32x4_t e = vldrwq_s32(consts + 12);
    const int32x4_t lo = vldrwq_s32(consts + 16);
    const int8_t *a;
    const int8_t *b;
    int32x4_t acc;
    int32x4_t x;
    int32x4_t w;
#define NNRT_DW_TAP(ptr, wofs)                                                                \
    "vldrb.s32 %q[x], [" ptr "]\n\t"                                                          \
    "vldrw.32 %q[w], [%[wl], #" wofs "]\n\t"                                                  \
    "vmul.i32 %q[x], %q[x], %q[w]\n\t"                                                        \
    "vadd.i32 %q[acc], %q[acc], %q[x]\n\t"
#define NNRT_DW_ROW(w0, w1, w2)                                                               \
    NNRT_DW_TAP("%[a]", w0) "add %[b], %[a], %[ts]\n\t" NNRT_DW_TAP("%[b]", w1)               \
    "add %[b], %[b], %[ts]\n\t" NNRT_DW_TAP("%[b]", w2) "add %[a], %[a], %[rs]\n\t"
    __asm__ volatile(
        "1:\n\t"
        "vmov %q[acc], %q[st]\n\t"
        "mov %[a], %[px]\n\t"
        NNRT_DW_ROW("0", "16", "32")
        NNRT_DW_ROW("48", "64", "80")
        NNRT_DW_ROW("96", "112", "128")
        "vshl.s32 %q[acc], %q[acc], %q[lsh]\n\t"
        "vqrdmulh.s32 %q[acc], %q[acc], %q[m]\n\t"
        "vand %q[x], %q[acc], %q[e]\n\t"
        "vshr.s32 %q[x], %q[x], #31\n\t"
        "vqadd.s32 %q[acc], %q[acc], %q[x]\n\t"
        "vrshl.s32 %q[acc], %q[acc], %q[e]\n\t"
        "vadd.i32 %q[acc], %q[acc], %[oo]\n\t"
        "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"
        "vdup.32 %q[x], %[hi]\n\t"
        "vmin.s32 %q[acc], %q[acc], %q[x]\n\t"
        "vstrb.32 %q[acc], [%[out]]\n\t"
        "add %[out], %[out], %[cs]\n\t"
        "add %[px], %[px], %[ps]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [px] "+r"(px), [out] "+l"(out), [n] "+r"(n), [a] "=&l"(a), [b] "=&l"(b),
          [acc] "=&w"(acc), [x] "=&w"(x), [w] "=&w"(w)
        : [wl] "r"(wl), [rs] "r"(rs), [ts] "r"(ts), [ps] "r"(ps), [cs] "r"(cs),
          [oo] "r"(oo), [hi] "r"(hi), [st] "w"(start), [m] "w"(m), [lsh] "w"(lsh),
          [e] "w"(e), [lo] "w"(lo)
        : "cc", "memory");
#undef NNRT_DW_TAP
#undef NNRT_DW_ROW
}
#endif

/* What a group's pixel loops read of the geometry, copied (the int8 stores of the
 * outputs would make GCC read the parameters again after each). */
typedef struct {
    int32_t in_h, in_w, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, batches, off, out_off;
} nnrt_mve_dw_geom_t;

/* One pixel with taps outside the input: the taps inside (rows fy0..fy1, columns
 * fx0..fx1, found once) with the offset added to each input. */
static NNRT_NOINLINE int32x4_t nnrt_mve_dw_border(const nnrt_mve_dw_geom_t *q,
                                                  const int8_t *in_b, const int32_t *wl,
                                                  int32x4_t acc, int32_t y0, int32_t x0,
                                                  size_t row, size_t ch)
{
    int32_t fy0 = 0;
    int32_t fy1 = q->kh;
    int32_t fx0 = 0;
    int32_t fx1 = q->kw;
    while (fy0 < fy1 && y0 + fy0 * q->dh < 0) {
        ++fy0;
    }
    while (fy1 > fy0 && y0 + (fy1 - 1) * q->dh >= q->in_h) {
        --fy1;
    }
    while (fx0 < fx1 && x0 + fx0 * q->dw < 0) {
        ++fx0;
    }
    while (fx1 > fx0 && x0 + (fx1 - 1) * q->dw >= q->in_w) {
        --fx1;
    }
    if (fy0 == fy1 || fx0 == fx1) {
        return acc; /* no tap inside (padding wider than the filter) */
    }
    const int32_t off = q->off;
    const size_t row_step = (size_t)q->dh * row;
    const size_t tap_step = (size_t)q->dw * ch;
    const int8_t *py = in_b + (size_t)(y0 + fy0 * q->dh) * row + (size_t)(x0 + fx0 * q->dw) * ch;
    const int32_t *wy = wl + 4 * (fy0 * q->kw + fx0);
    for (int32_t fy = fy0; fy < fy1; ++fy, py += row_step, wy += 4 * q->kw) {
        const int8_t *r = py;
        const int32_t *w = wy;
        for (int32_t fx = fx0; fx < fx1; ++fx, r += tap_step, w += 4) {
            acc = vaddq_s32(acc, vmulq_s32(vaddq_n_s32(vldrbq_s32(r), off), vldrwq_s32(w)));
        }
    }
    return acc;
}

/* Channels [c, c + 4) of every output pixel. */
static NNRT_NOINLINE void nnrt_mve_dw_group(const nnrt_conv_s8_params_t *prm,
                                            const nnrt_mve_dw_geom_t *q, const int8_t *input,
                                            const int8_t *filter, const int32_t *bias,
                                            int8_t *output, int32_t c, int32_t ch)
{
    const int32_t kh = q->kh;
    const int32_t kw = q->kw;
    const int32_t taps = kh * kw;
    int32_t wl[4 * NNRT_MVE_DW_MAX_TAPS] __attribute__((aligned(8)));
    int32x4_t wsum = vdupq_n_s32(0);
    for (int32_t t = 0; t < taps; ++t) {
        const int32x4_t w = vldrbq_s32(filter + (size_t)t * (size_t)ch + c);
        vstrwq_s32(wl + 4 * t, w);
        wsum = vaddq_s32(wsum, w);
    }
    const int32x4_t b = bias != NULL ? vldrwq_s32(bias + c) : vdupq_n_s32(0);
    const int32x4_t start = vmlaq_n_s32(b, wsum, q->off);
    const int32x4_t sh = prm->per_channel ? vldrwq_s32(prm->shift + c)
                                          : vdupq_n_s32(prm->shift[0]);
    const int32x4_t m = prm->per_channel ? vldrwq_s32(prm->multiplier + c)
                                         : vdupq_n_s32(prm->multiplier[0]);
    const int32x4_t lsh = vmaxq_s32(sh, vdupq_n_s32(0));
    const int32x4_t e = vminq_s32(sh, vdupq_n_s32(0));
    const int32x4_t lo = vdupq_n_s32(prm->act_min);
    const int32x4_t hi = vdupq_n_s32(prm->act_max);
    const int32_t out_off = q->out_off;
    const size_t row = (size_t)q->in_w * (size_t)ch;
    const size_t row_step = (size_t)q->dh * row;
    const size_t tap_step = (size_t)q->dw * (size_t)ch;
    const size_t px_step = (size_t)q->sw * (size_t)ch;
    /* the output columns whose windows lie inside the input's columns: [ox_lo, ox_hi) */
    const int32_t ox_lo0 = (q->pl + q->sw - 1) / q->sw;
    const int32_t span = q->in_w - 1 - (kw - 1) * q->dw + q->pl;
    int32_t ox_hi = span < 0 ? 0 : span / q->sw + 1;
    ox_hi = ox_hi > q->ow ? q->ow : ox_hi;
    const int32_t ox_lo = ox_lo0 < ox_hi ? ox_lo0 : ox_hi;
    int32_t consts[22] __attribute__((aligned(8)));
    vstrwq_s32(consts, start);
    vstrwq_s32(consts + 4, m);
    vstrwq_s32(consts + 8, lsh);
    vstrwq_s32(consts + 12, e);
    vstrwq_s32(consts + 16, lo);
    consts[20] = out_off;
    consts[21] = prm->act_max;
    const int32_t steps[4] = {(int32_t)row_step, (int32_t)tap_step, (int32_t)px_step, ch};
    int8_t *out = output + c;
    (void)consts;
    (void)steps;
    for (int32_t n = 0; n < q->batches; ++n) {
        const int8_t *in_b = input + (size_t)n * (size_t)q->in_h * row + c;
        for (int32_t oy = 0; oy < q->oh; ++oy) {
            const int32_t y0 = oy * q->sh - q->pt;
            const int rows_in = y0 >= 0 && y0 + (kh - 1) * q->dh < q->in_h;
            int32_t ox = 0;
            for (; ox < q->ow; ++ox, out += ch) {
                if (rows_in && ox == ox_lo) {
                    const int8_t *px = in_b + (size_t)y0 * row
                                       + (size_t)(ox * q->sw - q->pl) * (size_t)ch;
#if defined(__OPTIMIZE__)
                    if (kh == 3 && kw == 3 && ox < ox_hi) {
                        nnrt_mve_dw_run3x3(px, out, ox_hi - ox, wl, consts, steps);
                        out += (size_t)(ox_hi - ox) * (size_t)ch;
                        ox = ox_hi;
                    }
#endif
                    for (; ox < ox_hi; ++ox, out += ch, px += px_step) {
                        const int32x4_t acc =
                            nnrt_mve_dw_inside(px, wl, start, kh, kw, row_step, tap_step);
                        vstrbq_s32(out, nnrt_mve_rq(acc, m, lsh, e, out_off, lo, hi));
                    }
                    if (ox == q->ow) {
                        break;
                    }
                }
                const int32x4_t acc = nnrt_mve_dw_border(q, in_b, wl, b, y0,
                                                         ox * q->sw - q->pl, row, (size_t)ch);
                vstrbq_s32(out, nnrt_mve_rq(acc, m, lsh, e, out_off, lo, hi));
            }
        }
    }
}

/**
 * The depthwise convolution of params (checked, no fused pool) on MVE cores: returns 1
 * when it ran (depth multiplier 1, at most NNRT_MVE_DW_MAX_TAPS taps), 0 (nothing
 * written) otherwise, for a channel count that is not a multiple of 4 (the DSP
 * path's groups and single channels then run) and where the DSP plane path is faster.
 */
static inline int nnrt_mve_dw_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &params->geom;
    if (g->filter_c != 1 || g->filter_h * g->filter_w > NNRT_MVE_DW_MAX_TAPS
        || (g->input_c & 3) != 0) {
        return 0;
    }
    /* 3x3 stride 1 over a map of 16 outputs or more: the DSP plane path (dw_plane.h:
     * neighbouring outputs share their loads through SMLAD) runs fewer instructions
     * (person_detect on the M55: 24x24x32 374,406 against 404,875 here, 6x6x128 149,406
     * against 179,281); strided and small maps run fewer here (48x48x16 stride 2:
     * 268,843 -> 178,656; 3x3x256: 147,094 -> 128,500). */
    if (g->filter_h == 3 && g->filter_w == 3 && g->stride_h == 1 && g->stride_w == 1
        && g->dilation_h == 1 && g->dilation_w == 1 && g->output_h * g->output_w >= 16) {
        return 0;
    }
    const nnrt_mve_dw_geom_t q = {g->input_h,  g->input_w,   g->filter_h,         g->filter_w,
                                  g->stride_h, g->stride_w,   g->dilation_h,       g->dilation_w,
                                  g->pad_top,  g->pad_left,   g->output_h,         g->output_w,
                                  g->batches,  params->input_offset, params->output_offset};
    for (int32_t c = 0; c < g->input_c; c += 4) {
        nnrt_mve_dw_group(params, &q, input, filter, bias, output, c, g->input_c);
    }
    return 1;
}

#endif /* NNRT_MVE */

#endif /* NNRT_KERNELS_INTERNAL_MVE_DW_H_ */
