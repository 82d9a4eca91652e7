/*
 * Internal to the nnrt kernels: the Helium (MVE) depth loop of the int8 matrix core
 * (internal/gemm.h, internal/gemm_body.h), compiled only where NNRT_MVE (internal/mve.h).
 *
 * Columns layout on MVE cores (private, like the DSP and portable ones of gemm.h):
 * pixel p's k int8 input values as they are (no offset added) at byte p * k, and the
 * input offset as an int32 in the last word of the NNRT_GEMM_COLS_BYTES(k) area
 * (16 * ceil(k / 4) - 4 >= 2 k for every k >= 1: after both pixels). The depth loop
 * then multiplies int8 by int8, 16 per VMLADAVA, and adds the offset once per output:
 *
 *   sum_d w[d] * (x[d] + off) = sum_d w[d] * x[d] + off * sum_d w[d]
 *
 * with sum_d w[d] by VADDVA on the weight vectors already loaded (one per 16 weights
 * and row, shared by both pixels). Exact int32 sums, the same as every other path
 * (the requantisation after it is unchanged). The depth tail (k % 16) is one more
 * round with VCTP-predicated zeroing loads: positions past k load 0 and add nothing.
 */
#ifndef NNRT_KERNELS_INTERNAL_MVE_GEMM_H_
#define NNRT_KERNELS_INTERNAL_MVE_GEMM_H_

#include "mve.h"

#if NNRT_MVE
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "simd.h"

/* The word holding the input offset in the columns of depth k. */
static inline int32_t *nnrt_mve_cols_off(void *cols, int32_t k)
{
    return (int32_t *)(void *)((uint8_t *)cols + NNRT_GEMM_COLS_BYTES(k) - 4);
}

/* nnrt_cols_put_s8() (gemm.h): a copy of x, 16 bytes a vector, and the offset. */
static NNRT_ALWAYS_INLINE void nnrt_mve_cols_put(void *cols, int32_t k, int32_t p, int32_t k0,
                                                 const int8_t *x, int32_t n,
                                                 int32_t input_offset)
{
    int8_t *dst = (int8_t *)cols + (size_t)p * (size_t)k + (size_t)k0;
    for (; n >= 16; n -= 16, x += 16, dst += 16) {
        vstrbq_s8(dst, vldrbq_s8(x));
    }
    if (n > 0) {
        const mve_pred16_t t = vctp8q((uint32_t)n);
        vstrbq_p_s8(dst, vldrbq_z_s8(x, t), t);
    }
    *nnrt_mve_cols_off(cols, k) = input_offset;
}

/* nnrt_gemm_mac_2x2() (gemm_body.h) on the MVE columns: a[0] += (pixel 0, w0),
 * a[1] += (pixel 1, w0), a[2] += (pixel 0, w1), a[3] += (pixel 1, w1). */
static NNRT_ALWAYS_INLINE void nnrt_mve_mac_2x2(const void *cols, int32_t k, const int8_t *w0,
                                                const int8_t *w1, int32_t a[4])
{
    const int8_t *x0 = (const int8_t *)cols;
    const int8_t *x1 = x0 + k;
    int32_t a00 = 0;
    int32_t a01 = 0;
    int32_t a10 = 0;
    int32_t a11 = 0;
    int32_t s0 = 0;
    int32_t s1 = 0;
    int32_t n = k;
    /* 16 depths of the 2 x 2 block and both weight sums */
#define NNRT_MVE_MAC_2X2()                                                                    \
    do {                                                                                      \
        a00 = vmladavaq_s8(a00, vx0, vw0);                                                    \
        a01 = vmladavaq_s8(a01, vx1, vw0);                                                    \
        s0 = vaddvaq_s8(s0, vw0);                                                             \
        a10 = vmladavaq_s8(a10, vx0, vw1);                                                    \
        a11 = vmladavaq_s8(a11, vx1, vw1);                                                    \
        s1 = vaddvaq_s8(s1, vw1);                                                             \
    } while (0)
    for (; n >= 16; n -= 16, x0 += 16, x1 += 16, w0 += 16, w1 += 16) {
        const int8x16_t vx0 = vldrbq_s8(x0);
        const int8x16_t vx1 = vldrbq_s8(x1);
        const int8x16_t vw0 = vldrbq_s8(w0);
        const int8x16_t vw1 = vldrbq_s8(w1);
        NNRT_MVE_MAC_2X2();
    }
    if (n > 0) {
        const mve_pred16_t t = vctp8q((uint32_t)n);
        const int8x16_t vx0 = vldrbq_z_s8(x0, t);
        const int8x16_t vx1 = vldrbq_z_s8(x1, t);
        const int8x16_t vw0 = vldrbq_z_s8(w0, t);
        const int8x16_t vw1 = vldrbq_z_s8(w1, t);
        NNRT_MVE_MAC_2X2();
    }
#undef NNRT_MVE_MAC_2X2
    const uint32_t off = (uint32_t)*nnrt_mve_cols_off((void *)(uintptr_t)cols, k);
    const uint32_t o0 = off * (uint32_t)s0;
    const uint32_t o1 = off * (uint32_t)s1;
    a[0] = (int32_t)((uint32_t)a[0] + (uint32_t)a00 + o0);
    a[1] = (int32_t)((uint32_t)a[1] + (uint32_t)a01 + o0);
    a[2] = (int32_t)((uint32_t)a[2] + (uint32_t)a10 + o1);
    a[3] = (int32_t)((uint32_t)a[3] + (uint32_t)a11 + o1);
}

#if defined(__OPTIMIZE__) && defined(__GNUC__)
/*
 * The 2 x 2 sums of nnrt_mve_mac_2x2() without the weight sums, for a core whose biases
 * hold the input offset's term (g->bias_off): per 16 depths 4 VLDRB, 4 VMLADAVA and the
 * low-overhead loop's LE, 9 instructions per 64 MACs (GCC's loop with the sums: 12), the
 * tail (k % 16) by VCTP-predicated zeroing loads as there. Sums into even registers
 * (VMLADAVA's RdaLo: constraint "Te").
 */
static NNRT_ALWAYS_INLINE void nnrt_mve_mac_2x2_nosum(const void *cols, int32_t k,
                                                      const int8_t *w0, const int8_t *w1,
                                                      int32_t a[4])
{
    const int8_t *x0 = (const int8_t *)cols;
    const int8_t *x1 = x0 + k;
    int32_t a00 = 0;
    int32_t a01 = 0;
    int32_t a10 = 0;
    int32_t a11 = 0;
    register int32_t count __asm__("lr") = k >> 4;
    if (count != 0) {
        __asm__("dls lr, lr\n"
                "1:\n\t"
                "vldrb.8 q0, [%[x0]], #16\n\t"
                "vldrb.8 q1, [%[x1]], #16\n\t"
                "vldrb.8 q2, [%[w0]], #16\n\t"
                "vmladava.s8 %[a00], q0, q2\n\t"
                "vmladava.s8 %[a01], q1, q2\n\t"
                "vldrb.8 q3, [%[w1]], #16\n\t"
                "vmladava.s8 %[a10], q0, q3\n\t"
                "vmladava.s8 %[a11], q1, q3\n\t"
                "le lr, 1b\n\t"
                : [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11),
                  [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0), [w1] "+r"(w1), "+r"(count)
                :
                : "q0", "q1", "q2", "q3", "memory");
    }
    if ((k & 15) != 0) {
        const mve_pred16_t t = vctp8q((uint32_t)(k & 15));
        const int8x16_t vx0 = vldrbq_z_s8(x0, t);
        const int8x16_t vx1 = vldrbq_z_s8(x1, t);
        const int8x16_t vw0 = vldrbq_z_s8(w0, t);
        const int8x16_t vw1 = vldrbq_z_s8(w1, t);
        a00 = vmladavaq_s8(a00, vx0, vw0);
        a01 = vmladavaq_s8(a01, vx1, vw0);
        a10 = vmladavaq_s8(a10, vx0, vw1);
        a11 = vmladavaq_s8(a11, vx1, vw1);
    }
    a[0] = (int32_t)((uint32_t)a[0] + (uint32_t)a00);
    a[1] = (int32_t)((uint32_t)a[1] + (uint32_t)a01);
    a[2] = (int32_t)((uint32_t)a[2] + (uint32_t)a10);
    a[3] = (int32_t)((uint32_t)a[3] + (uint32_t)a11);
}
/* g has bias_off, known at build time: a specialised core (the generic kernel's never
 * has one, and compiles no second loop) */
#define NNRT_MVE_BIAS_OFF(g)                                                                 \
    (__builtin_constant_p((g)->bias_off != NULL) && (g)->rq != NULL && (g)->bias_off != NULL)
#else
#define nnrt_mve_mac_2x2_nosum(cols, k, w0, w1, a) nnrt_mve_mac_2x2(cols, k, w0, w1, a)
#define NNRT_MVE_BIAS_OFF(g) 0
#endif

/*
 * The output stage of 4 channels of one pixel, in vectors: acc (bias included) times
 * the multipliers m, TFLM's two steps exactly (nnrt_multiply_by_quantized_multiplier():
 * the wrapping left shift lsh, SRDHM = VQRDMULH, whose rounding is TFLM's nudge for
 * both signs, then the rounding division by 2^-e, e = min(shift, 0) <= 0: VRSHL rounds
 * half up, so a negative value with e < 0 is first lowered by one, saturating: its
 * sign bit ANDed with e's), plus the output offset, clamped to [lo, hi].
 */
static NNRT_ALWAYS_INLINE int32x4_t nnrt_mve_rq(int32x4_t acc, int32x4_t m, int32x4_t lsh,
                                                int32x4_t e, int32_t out_off, int32x4_t lo,
                                                int32x4_t hi)
{
    int32x4_t y = vqrdmulhq_s32(vshlq_s32(acc, lsh), m);
    y = vqaddq_s32(y, vshrq_n_s32(vandq_s32(y, e), 31));
    y = vaddq_n_s32(vrshlq_s32(y, e), out_off);
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

/*
 * The same from channel records (gemm.h, a specialised op: every channel in the folded
 * form of nnrt_rq_fold(), output offset included): with y = VQRDMULH(acc, m) =
 * floor((acc m + 2^30) / 2^31), the high word of acc m +- 2^30 (by acc's sign) is
 * h = floor((y + [acc < 0 ? -1 : 0]) / 2), a halving add (no overflow), and the output
 * (h + addend) >> rsh (VSHL by -rsh: its bottom byte, the end mark above it ignored).
 */
static NNRT_ALWAYS_INLINE int32x4_t nnrt_mve_rq_fold(int32x4_t acc, int32x4_t m,
                                                     int32x4_t addend, int32x4_t nrsh,
                                                     int32x4_t lo, int32x4_t hi)
{
    const int32x4_t h = vhaddq_s32(vqrdmulhq_s32(acc, m), vshrq_n_s32(acc, 31));
    const int32x4_t y = vshlq_s32(vaddq_s32(h, addend), nrsh);
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

/*
 * Channels [oc, n) of a pixel pair (nnrt_gemm_pair_body() / nnrt_gemm_pair_body_rq() of
 * gemm_body.h on MVE cores): 4 channels a round, their 2 x 4 sums by two 2 x 2 depth
 * loops, the output stage of each pixel's 4 channels in one vector (multipliers, shifts,
 * biases loaded as vectors; records gathered), stored by VSTRB.32. The last 1-3 channels
 * are the same round with VCTP-predicated loads and stores. oc even where g->rq is set.
 */
static NNRT_ALWAYS_INLINE void nnrt_mve_pairs(const nnrt_gemm_s8_t *g, const void *cols,
                                              int8_t *out0, int8_t *out1, int32_t oc,
                                              int32_t n)
{
    const int32_t k = g->k;
    const int32x4_t lo = vdupq_n_s32(g->act_min);
    const int32x4_t hi = vdupq_n_s32(g->act_max);
    /* the records of channels c .. c + 3 (c even) at words rq + 4 c + these */
    static const uint32_t rq_m[4] = {2, 5, 10, 13};
    static const uint32_t rq_ad[4] = {3, 6, 11, 14};
    static const uint32_t rq_rs[4] = {4, 7, 12, 15};
    static const uint32_t rq_b[4] = {0, 1, 8, 9};
    int32x4_t m = vdupq_n_s32(0);
    int32x4_t lsh = vdupq_n_s32(0);
    int32x4_t e = vdupq_n_s32(0);
    if (g->rq == NULL && !g->per_channel) {
        const int32_t sh = g->shift[0];
        m = vdupq_n_s32(g->multiplier[0]);
        lsh = vdupq_n_s32(sh > 0 ? sh : 0);
        e = vdupq_n_s32(sh > 0 ? 0 : sh);
    }
    for (; oc < n; oc += 4) {
        const int32_t left = n - oc;
        const int8_t *w = g->filter + (size_t)oc * (size_t)k;
        int32_t a0[4] = {0, 0, 0, 0}; /* pixel 0, channels oc .. oc + 3 */
        int32_t a1[4] = {0, 0, 0, 0};
        int32_t t[4] = {0, 0, 0, 0};
        /* g->bias_off: no weight sums, the offset's term in the bias */
        if (NNRT_MVE_BIAS_OFF(g)) {
            nnrt_mve_mac_2x2_nosum(cols, k, w, left > 1 ? w + k : w, t);
        } else {
            nnrt_mve_mac_2x2(cols, k, w, left > 1 ? w + k : w, t);
        }
        a0[0] = t[0];
        a1[0] = t[1];
        a0[1] = t[2];
        a1[1] = t[3];
        if (left > 2) {
            t[0] = t[1] = t[2] = t[3] = 0;
            const int8_t *w2 = w + 2 * (size_t)k;
            const int8_t *w3 = left > 3 ? w + 3 * (size_t)k : w2;
            if (NNRT_MVE_BIAS_OFF(g)) {
                nnrt_mve_mac_2x2_nosum(cols, k, w2, w3, t);
            } else {
                nnrt_mve_mac_2x2(cols, k, w2, w3, t);
            }
            a0[2] = t[0];
            a1[2] = t[1];
            a0[3] = t[2];
            a1[3] = t[3];
        }
        const mve_pred16_t p = vctp32q((uint32_t)left);
        int32x4_t v0 = vldrwq_s32(a0);
        int32x4_t v1 = vldrwq_s32(a1);
        if (g->rq != NULL) {
            const int32_t *r = g->rq + 4 * (size_t)oc;
            const int32x4_t b =
                NNRT_MVE_BIAS_OFF(g)
                    ? vldrwq_z_s32(g->bias_off + oc, p)
                    : vldrwq_gather_shifted_offset_z_s32(r, vld1q_u32(rq_b), p);
            const int32x4_t mm = vldrwq_gather_shifted_offset_z_s32(r, vld1q_u32(rq_m), p);
            const int32x4_t ad = vldrwq_gather_shifted_offset_z_s32(r, vld1q_u32(rq_ad), p);
            const int32x4_t nr = vnegq_s32(
                vldrwq_gather_shifted_offset_z_s32(r, vld1q_u32(rq_rs), p));
            v0 = nnrt_mve_rq_fold(vaddq_s32(v0, b), mm, ad, nr, lo, hi);
            v1 = nnrt_mve_rq_fold(vaddq_s32(v1, b), mm, ad, nr, lo, hi);
        } else {
            if (g->bias != NULL) {
                const int32x4_t b = vldrwq_z_s32(g->bias + oc, p);
                v0 = vaddq_s32(v0, b);
                v1 = vaddq_s32(v1, b);
            }
            if (g->per_channel) {
                const int32x4_t sh = vldrwq_z_s32(g->shift + oc, p);
                m = vldrwq_z_s32(g->multiplier + oc, p);
                lsh = vmaxq_s32(sh, vdupq_n_s32(0));
                e = vminq_s32(sh, vdupq_n_s32(0));
            }
            v0 = nnrt_mve_rq(v0, m, lsh, e, g->output_offset, lo, hi);
            v1 = nnrt_mve_rq(v1, m, lsh, e, g->output_offset, lo, hi);
        }
        vstrbq_p_s32(out0 + oc, v0, p);
        vstrbq_p_s32(out1 + oc, v1, p);
    }
}

#endif /* NNRT_MVE */

#endif /* NNRT_KERNELS_INTERNAL_MVE_GEMM_H_ */
