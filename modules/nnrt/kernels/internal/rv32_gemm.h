/*
 * Internal to the nnrt kernels: the int8 matrix core (internal/gemm.h) on RV32IM, a core
 * without SIMD (NNRT_RV32, internal/simd.h): the depth loop of a block and the column
 * conversion (internal/gemm_body.h uses them; the loop over a pixel pair's channel blocks
 * is internal/rv32_gemm_pairs.h).
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

/* dst[i] = x[i] + input_offset for i < n (the portable columns): four a loop iteration
 * (GCC's loop took 6 instructions a value, the unrolled one 3.75). */
static NNRT_ALWAYS_INLINE void nnrt_rv_cols_put(int16_t *dst, const int8_t *x, int32_t n,
                                                int32_t input_offset)
{
    const int8_t *const x_end4 = x + (n & ~3);
    for (; x != x_end4; x += 4, dst += 4) {
        dst[0] = (int16_t)((int32_t)x[0] + input_offset);
        dst[1] = (int16_t)((int32_t)x[1] + input_offset);
        dst[2] = (int16_t)((int32_t)x[2] + input_offset);
        dst[3] = (int16_t)((int32_t)x[3] + input_offset);
    }
    for (int32_t i = 0; i < (n & 3); ++i) {
        dst[i] = (int16_t)((int32_t)x[i] + input_offset);
    }
}

#endif /* NNRT_RV32 */

#endif /* NNRT_KERNELS_INTERNAL_RV32_GEMM_H_ */
