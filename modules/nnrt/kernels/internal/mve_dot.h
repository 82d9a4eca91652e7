/*
 * Internal to the nnrt kernels: Helium (MVE) int8 dot products with the input offset
 * (the fully connected layer, nnrt_dot1_s8() / nnrt_dot3_s8() of internal/dot.h),
 * compiled only where NNRT_MVE (internal/mve.h).
 *
 * sum_d w[d] * (x[d] + off) = sum_d w[d] * x[d] + off * sum_d w[d]: per 16 inputs one
 * input vector shared by the rows, per row one weight vector, one VMLADAVA (16
 * multiply-adds) and one VADDVA (the weight sum). The tail (n % 16) is one more round
 * with VCTP-predicated zeroing loads. Exact int32 sums (wrapping as every path's).
 */
#ifndef NNRT_KERNELS_INTERNAL_MVE_DOT_H_
#define NNRT_KERNELS_INTERNAL_MVE_DOT_H_

#include "mve.h"

#if NNRT_MVE
#include <stddef.h>
#include <stdint.h>

#include "simd.h"

/* One round of 16 (or the predicated tail) of row r (< rows): its weight vector through
 * its own pointer (post-indexed, as a VLDRB's immediate offset reaches 127 bytes only),
 * one VMLADAVA, one VADDVA. */
#define NNRT_MVE_DOT_ROW(r, ld)                                                               \
    do {                                                                                      \
        if (rows > (r)) {                                                                     \
            const int8x16_t vw = ld(w##r);                                                    \
            a##r = vmladavaq_s8(a##r, vx, vw);                                                \
            s##r = vaddvaq_s8(s##r, vw);                                                      \
        }                                                                                     \
    } while (0)

/**
 * acc[r] += sum_{d < n} w[r * stride + d] * (x[d] + in_off) for r < rows (1..4, a
 * constant at the call). The sums in scalars, not arrays: with arrays GCC kept them on
 * the stack (8 stores per round, 33 instructions per 64 MACs instead of 15).
 */
static NNRT_ALWAYS_INLINE void nnrt_mve_dot_rows(const int8_t *x, const int8_t *w,
                                                 int32_t stride, int32_t n, int32_t in_off,
                                                 int32_t *acc, int32_t rows)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    const int8_t *x_end = x + (n & ~15);
#if defined(__OPTIMIZE__) && defined(__GNUC__)
    if (rows == 3) {
        /* 3 rows in assembly: GCC spilled a sum and copied others each round. VMLADAVA
         * and VADDVA accumulate into even registers only (constraint "Te"), 7 of them:
         * 6 sums, so 3 rows, not 4. Per 16 inputs 4 VLDRB, 3 VMLADAVA, 3 VADDVA and the
         * low-overhead loop's LE: 11 instructions per 48 MACs. */
        register int32_t count __asm__("lr") = (n >> 4);
        if (count != 0) {
            __asm__("dls lr, lr\n"
                    "1:\n\t"
                    "vldrb.8 q0, [%[x]], #16\n\t"
                    "vldrb.8 q1, [%[w0]], #16\n\t"
                    "vmladava.s8 %[a0], q0, q1\n\t"
                    "vaddva.s8 %[s0], q1\n\t"
                    "vldrb.8 q2, [%[w1]], #16\n\t"
                    "vmladava.s8 %[a1], q0, q2\n\t"
                    "vaddva.s8 %[s1], q2\n\t"
                    "vldrb.8 q1, [%[w2]], #16\n\t"
                    "vmladava.s8 %[a2], q0, q1\n\t"
                    "vaddva.s8 %[s2], q1\n\t"
                    "le lr, 1b\n\t"
                    : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [s0] "+Te"(s0),
                      [s1] "+Te"(s1), [s2] "+Te"(s2), [x] "+r"(x), [w0] "+r"(w0),
                      [w1] "+r"(w1), [w2] "+r"(w2), "+r"(count)
                    :
                    : "q0", "q1", "q2", "memory");
        }
    } else
#endif
    {
#define NNRT_MVE_LD(p) vldrbq_s8(p); p += 16
        for (; x != x_end; x += 16) {
            const int8x16_t vx = vldrbq_s8(x);
            NNRT_MVE_DOT_ROW(0, NNRT_MVE_LD);
            NNRT_MVE_DOT_ROW(1, NNRT_MVE_LD);
            NNRT_MVE_DOT_ROW(2, NNRT_MVE_LD);
            NNRT_MVE_DOT_ROW(3, NNRT_MVE_LD);
        }
#undef NNRT_MVE_LD
    }
    if ((n & 15) != 0) {
        const mve_pred16_t t = vctp8q((uint32_t)(n & 15));
        const int8x16_t vx = vldrbq_z_s8(x, t);
#define NNRT_MVE_LD(p) vldrbq_z_s8(p, t)
        NNRT_MVE_DOT_ROW(0, NNRT_MVE_LD);
        NNRT_MVE_DOT_ROW(1, NNRT_MVE_LD);
        NNRT_MVE_DOT_ROW(2, NNRT_MVE_LD);
        NNRT_MVE_DOT_ROW(3, NNRT_MVE_LD);
#undef NNRT_MVE_LD
    }
    const uint32_t off = (uint32_t)in_off;
    acc[0] = (int32_t)((uint32_t)acc[0] + (uint32_t)a0 + off * (uint32_t)s0);
    if (rows > 1) {
        acc[1] = (int32_t)((uint32_t)acc[1] + (uint32_t)a1 + off * (uint32_t)s1);
    }
    if (rows > 2) {
        acc[2] = (int32_t)((uint32_t)acc[2] + (uint32_t)a2 + off * (uint32_t)s2);
    }
    if (rows > 3) {
        acc[3] = (int32_t)((uint32_t)acc[3] + (uint32_t)a3 + off * (uint32_t)s3);
    }
}
#undef NNRT_MVE_DOT_ROW

#endif /* NNRT_MVE */

#endif /* NNRT_KERNELS_INTERNAL_MVE_DOT_H_ */
