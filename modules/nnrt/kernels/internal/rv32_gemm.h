/*
 * Internal to the nnrt kernels: the int8 matrix core (internal/gemm.h) on RV32IM, a core
 * without SIMD (NNRT_RV32, internal/simd.h). Included by internal/gemm_body.h only, after
 * the output stage it reuses (nnrt_gemm_out_pair(), nnrt_gemm_put4()).
 *
 * RV32IM has no multiply-accumulate: every MAC is a MUL and an ADD, so the depth loop
 * costs 2 instructions per MAC plus the loads. The portable 2 x 2 block (two pixels x two
 * channels) loads 4 operands per 4 MACs; here 2 pixels x 4 channels share each load: per
 * depth position 2 LH (the pixels' int16 columns, portable layout of gemm.h), 4 LB (the
 * channels' weights), 8 MUL, 8 ADD: 22 instructions per 8 MACs, the depth unrolled by 4.
 * RISC-V's 31 registers hold the 8 accumulators, 6 operands and the pointers without a
 * spill. Where the depth is a build-time constant (a specialised op) and the rows are in
 * reach of a load's 12-bit immediate, the four weight rows and the second pixel's column
 * are addressed from one pointer each (no pointer increments per row). The columns keep
 * the portable layout and size (the planner's scratch is unchanged).
 *
 * Bit-exact with the portable block: the same exact int32 sums (wrapping addition is
 * associative), the same output stage per channel pair.
 */
#ifndef NNRT_KERNELS_INTERNAL_RV32_GEMM_H_
#define NNRT_KERNELS_INTERNAL_RV32_GEMM_H_

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "simd.h"

#if NNRT_RV32

/* 1 when depth k is a build-time constant small enough for immediate row offsets
 * (the last row at 3 k + 3 bytes, the second pixel's column at 2 k + 6 bytes: < 2048). */
#if defined(__OPTIMIZE__) && defined(__GNUC__)
#define NNRT_RV_GEMM_IMM(k) (__builtin_constant_p(k) && (k) <= 680)
#else
#define NNRT_RV_GEMM_IMM(k) 0
#endif

/* Between two depth positions: GCC's scheduler would otherwise hoist the loads of all
 * four positions of an iteration and spill (measured: 27 loads and stores of the stack
 * per 32 MACs); an empty asm that clobbers memory keeps each position's loads with it. */
#if defined(__GNUC__)
#define NNRT_RV_STEP_BARRIER() __asm__ volatile("" ::: "memory")
#else
#define NNRT_RV_STEP_BARRIER() ((void)0)
#endif

/* One depth position j: pixel values x0[j], x1[j] against the four rows' weights. */
#define NNRT_RV_MAC_2X4(j, X1, W1, W2, W3)                                                  \
    do {                                                                                    \
        const int32_t p0 = x0[j];                                                           \
        const int32_t p1 = X1[j];                                                           \
        int32_t v = w0[j];                                                                  \
        a0 += v * p0;                                                                       \
        a1 += v * p1;                                                                       \
        v = W1[j];                                                                          \
        a2 += v * p0;                                                                       \
        a3 += v * p1;                                                                       \
        v = W2[j];                                                                          \
        a4 += v * p0;                                                                       \
        a5 += v * p1;                                                                       \
        v = W3[j];                                                                          \
        a6 += v * p0;                                                                       \
        a7 += v * p1;                                                                       \
        NNRT_RV_STEP_BARRIER();                                                             \
    } while (0)

/*
 * a[2 c + p] += sum_{d < k} w[c * k + d] * cols[p * k + d] for the channels c < 4 of
 * filter rows w and the pixels p < 2 of the portable columns.
 */
static NNRT_ALWAYS_INLINE void nnrt_rv_gemm_mac_2x4(const void *cols, int32_t k,
                                                    const int8_t *w, int32_t a[8])
{
    const int16_t *x0 = (const int16_t *)cols;
    const int8_t *w0 = w;
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    int32_t a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7];
    const int16_t *const x_end = x0 + (k & ~3);
    if (NNRT_RV_GEMM_IMM(k)) {
        /* one pointer per operand matrix: the other rows at immediate offsets */
        for (; x0 != x_end; x0 += 4, w0 += 4) {
            NNRT_RV_MAC_2X4(0, (x0 + k), (w0 + k), (w0 + 2 * k), (w0 + 3 * k));
            NNRT_RV_MAC_2X4(1, (x0 + k), (w0 + k), (w0 + 2 * k), (w0 + 3 * k));
            NNRT_RV_MAC_2X4(2, (x0 + k), (w0 + k), (w0 + 2 * k), (w0 + 3 * k));
            NNRT_RV_MAC_2X4(3, (x0 + k), (w0 + k), (w0 + 2 * k), (w0 + 3 * k));
        }
        for (int32_t j = 0; j < (k & 3); ++j) {
            NNRT_RV_MAC_2X4(j, (x0 + k), (w0 + k), (w0 + 2 * k), (w0 + 3 * k));
        }
    } else {
        const int16_t *x1 = x0 + k;
        const int8_t *w1 = w0 + k;
        const int8_t *w2 = w1 + k;
        const int8_t *w3 = w2 + k;
        for (; x0 != x_end; x0 += 4, x1 += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4) {
            NNRT_RV_MAC_2X4(0, x1, w1, w2, w3);
            NNRT_RV_MAC_2X4(1, x1, w1, w2, w3);
            NNRT_RV_MAC_2X4(2, x1, w1, w2, w3);
            NNRT_RV_MAC_2X4(3, x1, w1, w2, w3);
        }
        for (int32_t j = 0; j < (k & 3); ++j) {
            NNRT_RV_MAC_2X4(j, x1, w1, w2, w3);
        }
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
    a[4] = a4;
    a[5] = a5;
    a[6] = a6;
    a[7] = a7;
}
#undef NNRT_RV_MAC_2X4

/*
 * Channels [oc0, n) of one pixel pair for the core g: blocks of 4 channels, then the
 * last pair and an odd last channel through nnrt_gemm_pair1() / nnrt_gemm_pair1_rq().
 * rq: 1 the channel records of g (nnrt_gemm_pair_body_rq()), 0 bias / multiplier /
 * shift with all_fast as for nnrt_gemm_pair1().
 */
static NNRT_ALWAYS_INLINE void nnrt_rv_gemm_pairs(const nnrt_gemm_s8_t *g,
                                                  const nnrt_gemm_pass_t *x, int32_t oc0,
                                                  int32_t n, int all_fast, int rq)
{
    /* locals: the byte stores may alias *x, which would be reloaded after each */
    const void *const cols = x->cols;
    int8_t *const out0 = x->out0;
    int8_t *const out1 = x->out1;
    const int32_t k = g->k;
    int32_t oc = oc0;
    for (; oc + 4 <= n; oc += 4) {
        int32_t a[8];
        for (int32_t c = 0; c < 4; ++c) {
            const int32_t b = rq ? nnrt_gemm_rq_bias(g->rq, oc + c)
                                 : (g->bias != NULL ? g->bias[oc + c] : 0);
            a[2 * c] = b;
            a[2 * c + 1] = b;
        }
        nnrt_rv_gemm_mac_2x4(cols, k, g->filter + (size_t)oc * (size_t)k, a);
        for (int32_t c = 0; c < 4; c += 2) {
            if (rq) {
                const int32_t *r0 = nnrt_gemm_rq_ch(g->rq, oc + c);
                const int32_t *r1 = nnrt_gemm_rq_ch(g->rq, oc + c + 1);
                nnrt_gemm_put4(g, nnrt_gemm_rq_out(a[2 * c], r0),
                               nnrt_gemm_rq_out(a[2 * c + 1], r0),
                               nnrt_gemm_rq_out(a[2 * c + 2], r1),
                               nnrt_gemm_rq_out(a[2 * c + 3], r1), out0, out1, oc + c,
                               oc + c + 1);
            } else {
                nnrt_gemm_out_pair(g, &a[2 * c], out0, out1, oc + c, 1, all_fast);
            }
        }
    }
    for (; oc < n; oc += 2) {
        const int32_t d = oc + 1 < n ? 1 : 0;
        if (rq) {
            nnrt_gemm_pair1_rq(g, cols, out0, out1, oc, d);
        } else {
            nnrt_gemm_pair1(g, cols, out0, out1, oc, d, all_fast);
        }
    }
}

#endif /* NNRT_RV32 */

#endif /* NNRT_KERNELS_INTERNAL_RV32_GEMM_H_ */
