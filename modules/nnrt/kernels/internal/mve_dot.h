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

/* One round of 16 (or the predicated tail) for `rows` rows (<= 4, a constant at the
 * call) at w + r * stride. */
#define NNRT_MVE_DOT_ROW(r)                                                                   \
    do {                                                                                      \
        if (rows > (r)) {                                                                     \
            const int8x16_t vw = ld(w + (r) * (size_t)stride);                                \
            a[r] = vmladavaq_s8(a[r], vx, vw);                                                \
            s[r] = vaddvaq_s8(s[r], vw);                                                      \
        }                                                                                     \
    } while (0)

/**
 * acc[r] += sum_{d < n} w[r * stride + d] * (x[d] + in_off) for r < rows (1..4).
 */
static NNRT_ALWAYS_INLINE void nnrt_mve_dot_rows(const int8_t *x, const int8_t *w,
                                                 int32_t stride, int32_t n, int32_t in_off,
                                                 int32_t *acc, int32_t rows)
{
    int32_t a[4] = {0, 0, 0, 0};
    int32_t s[4] = {0, 0, 0, 0};
    int32_t left = n;
    for (; left >= 16; left -= 16, x += 16, w += 16) {
        const int8x16_t vx = vldrbq_s8(x);
#define ld(p) vldrbq_s8(p)
        NNRT_MVE_DOT_ROW(0);
        NNRT_MVE_DOT_ROW(1);
        NNRT_MVE_DOT_ROW(2);
        NNRT_MVE_DOT_ROW(3);
#undef ld
    }
    if (left > 0) {
        const mve_pred16_t t = vctp8q((uint32_t)left);
        const int8x16_t vx = vldrbq_z_s8(x, t);
#define ld(p) vldrbq_z_s8(p, t)
        NNRT_MVE_DOT_ROW(0);
        NNRT_MVE_DOT_ROW(1);
        NNRT_MVE_DOT_ROW(2);
        NNRT_MVE_DOT_ROW(3);
#undef ld
    }
    for (int32_t r = 0; r < rows; ++r) {
        acc[r] = (int32_t)((uint32_t)acc[r] + (uint32_t)a[r]
                           + (uint32_t)in_off * (uint32_t)s[r]);
    }
}
#undef NNRT_MVE_DOT_ROW

#endif /* NNRT_MVE */

#endif /* NNRT_KERNELS_INTERNAL_MVE_DOT_H_ */
