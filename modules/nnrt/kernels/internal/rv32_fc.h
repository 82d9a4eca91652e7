/*
 * Internal to the nnrt kernels: the int8 fully connected dot products on RV32IM, a core
 * without SIMD (NNRT_RV32, internal/simd.h); internal/fc_body.h calls them.
 *
 * Every weight is used once, so a MAC costs at least its LB, MUL and ADD (RV32IM has no
 * multiply-accumulate). What the rows can share is the input: the portable
 * nnrt_dot3_s8() loads and offsets each input for three rows (49 instructions per 12
 * MACs, 4.1 a MAC, on RV32); here eight rows share it (RISC-V's 31 registers hold the 8
 * accumulators and the 8 row pointers), the inputs unrolled by 4: 4 LB + 4 ADD for the
 * inputs, 32 LB + 32 MUL + 32 ADD, the pointer increments and the branch, 3.4 a MAC. Where
 * the depth is a build-time constant (a specialised op) and the last row is in reach of a
 * load's 12-bit immediate, one pointer serves all rows (no increments per row).
 *
 * Bit-exact with the portable dot products: the same exact int32 sums (wrapping addition
 * is associative).
 */
#ifndef NNRT_KERNELS_INTERNAL_RV32_FC_H_
#define NNRT_KERNELS_INTERNAL_RV32_FC_H_

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "simd.h"

#if NNRT_RV32

/* 1 when depth d is a build-time constant and row 7 lies within a 12-bit immediate. */
#if defined(__OPTIMIZE__) && defined(__GNUC__)
#define NNRT_RV_FC_IMM(d) (__builtin_constant_p(d) && 7 * (d) + 3 <= 2047)
#define NNRT_RV_FC_BARRIER() __asm__ volatile("" ::: "memory")
#else
#define NNRT_RV_FC_IMM(d) 0
#define NNRT_RV_FC_BARRIER() ((void)0)
#endif

/* Input j (offset added) into rows 0..rows-1 (row r's weights at R(r)[j]). The barrier
 * keeps each input's loads with it (GCC's scheduler hoists them all and spills). */
#define NNRT_RV_FC_STEP(j, R)                                                               \
    do {                                                                                    \
        const int32_t xv = (int32_t)x[j] + in_off;                                          \
        a0 += (int32_t)R(0)[j] * xv;                                                        \
        a1 += (int32_t)R(1)[j] * xv;                                                        \
        a2 += (int32_t)R(2)[j] * xv;                                                        \
        a3 += (int32_t)R(3)[j] * xv;                                                        \
        if (rows == 8) {                                                                    \
            a4 += (int32_t)R(4)[j] * xv;                                                    \
            a5 += (int32_t)R(5)[j] * xv;                                                    \
            a6 += (int32_t)R(6)[j] * xv;                                                    \
            a7 += (int32_t)R(7)[j] * xv;                                                    \
        }                                                                                   \
        NNRT_RV_FC_BARRIER();                                                               \
    } while (0)

/*
 * acc[r] += sum_{d < depth} w[r * depth + d] * (x[d] + in_off) for r < rows, rows 4 or
 * 8 (a constant at each call).
 */
static NNRT_ALWAYS_INLINE void nnrt_rv_fc_dot(const int8_t *x, const int8_t *w, int32_t depth,
                                              int32_t in_off, int32_t *acc, int rows)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int32_t a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    if (rows == 8) {
        a4 = acc[4];
        a5 = acc[5];
        a6 = acc[6];
        a7 = acc[7];
    }
    const int8_t *const x_end = x + (depth & ~3);
    if (NNRT_RV_FC_IMM(depth)) {
#define NNRT_RV_FC_ROW_IMM(r) (w + (r) * depth)
        for (; x != x_end; x += 4, w += 4) {
            NNRT_RV_FC_STEP(0, NNRT_RV_FC_ROW_IMM);
            NNRT_RV_FC_STEP(1, NNRT_RV_FC_ROW_IMM);
            NNRT_RV_FC_STEP(2, NNRT_RV_FC_ROW_IMM);
            NNRT_RV_FC_STEP(3, NNRT_RV_FC_ROW_IMM);
        }
        for (int32_t j = 0; j < (depth & 3); ++j) {
            NNRT_RV_FC_STEP(j, NNRT_RV_FC_ROW_IMM);
        }
#undef NNRT_RV_FC_ROW_IMM
    } else {
        const int8_t *wr[8];
        for (int32_t r = 0; r < rows; ++r) {
            wr[r] = w + (size_t)r * (size_t)depth;
        }
        const int8_t *w0 = wr[0], *w1 = wr[1], *w2 = wr[2], *w3 = wr[3];
        const int8_t *w4 = w0, *w5 = w0, *w6 = w0, *w7 = w0;
        if (rows == 8) {
            w4 = wr[4];
            w5 = wr[5];
            w6 = wr[6];
            w7 = wr[7];
        }
#define NNRT_RV_FC_ROW_PTR(r) w##r
        for (; x != x_end; x += 4) {
            NNRT_RV_FC_STEP(0, NNRT_RV_FC_ROW_PTR);
            NNRT_RV_FC_STEP(1, NNRT_RV_FC_ROW_PTR);
            NNRT_RV_FC_STEP(2, NNRT_RV_FC_ROW_PTR);
            NNRT_RV_FC_STEP(3, NNRT_RV_FC_ROW_PTR);
            w0 += 4;
            w1 += 4;
            w2 += 4;
            w3 += 4;
            if (rows == 8) {
                w4 += 4;
                w5 += 4;
                w6 += 4;
                w7 += 4;
            }
        }
        for (int32_t j = 0; j < (depth & 3); ++j) {
            NNRT_RV_FC_STEP(j, NNRT_RV_FC_ROW_PTR);
        }
#undef NNRT_RV_FC_ROW_PTR
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    if (rows == 8) {
        acc[4] = a4;
        acc[5] = a5;
        acc[6] = a6;
        acc[7] = a7;
    }
}
#undef NNRT_RV_FC_STEP

/*
 * acc[r] += sum_{d < depth} (w[r * depth + d] + w_off) * (x[d] + in_off) for r < rows
 * (rows <= 8): 8 rows, or 4 and the rest, through nnrt_rv_fc_dot(); the others (a
 * weights offset, fewer than 4 rows) as the portable kernel.
 */
static NNRT_ALWAYS_INLINE void nnrt_rv_fc_rows(const int8_t *x, const int8_t *w, int32_t depth,
                                               int32_t in_off, int32_t w_off, int32_t *acc,
                                               int32_t rows)
{
    int32_t r = 0;
    if (w_off == 0 && rows == 8) { /* a constant rows for each instance */
        nnrt_rv_fc_dot(x, w, depth, in_off, acc, 8);
        r = 8;
    } else if (w_off == 0 && rows >= 4) {
        nnrt_rv_fc_dot(x, w, depth, in_off, acc, 4);
        r = 4;
    }
    w += (size_t)r * (size_t)depth;
    if (w_off == 0 && rows - r == 3) {
        nnrt_dot3_s8(x, w, depth, depth, in_off, acc + r);
        return;
    }
    for (; r < rows; ++r, w += depth) {
        if (w_off == 0) {
            acc[r] = nnrt_dot1_s8(x, w, depth, in_off, acc[r]);
            continue;
        }
        for (int32_t d = 0; d < depth; ++d) {
            acc[r] += ((int32_t)w[d] + w_off) * ((int32_t)x[d] + in_off);
        }
    }
}

#endif /* NNRT_RV32 */

#endif /* NNRT_KERNELS_INTERNAL_RV32_FC_H_ */
