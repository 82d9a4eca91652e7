/*
 * int8 dot products with the input offset applied on the fly (internal/dot.h). Three
 * rows share each input word: a fourth row would not fit the registers.
 */
#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "simd.h"

void nnrt_dot3_s8(const int8_t *x, const int8_t *w, int32_t w_stride, int32_t n,
                  int32_t input_offset, int32_t acc[3])
{
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + w_stride;
    const int8_t *w2 = w1 + w_stride;
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];
#if NNRT_DSP
    const uint32_t off2 = nnrt_pair16(input_offset);
    const int8_t *x_end = x + (n & ~3);
    while (x != x_end) {
        const uint32_t xv = nnrt_ld32(x);
        const uint32_t xe = __sxtab16(off2, xv);
        const uint32_t xo = nnrt_sxtab16_ror8(off2, xv);
        uint32_t wv = nnrt_ld32(w0);
        x += 4;
        w0 += 4;
        a0 = __smlad(xe, __sxtb16(wv), a0);
        a0 = __smlad(xo, nnrt_sxtb16_ror8(wv), a0);
        wv = nnrt_ld32(w1);
        w1 += 4;
        a1 = __smlad(xe, __sxtb16(wv), a1);
        a1 = __smlad(xo, nnrt_sxtb16_ror8(wv), a1);
        wv = nnrt_ld32(w2);
        w2 += 4;
        a2 = __smlad(xe, __sxtb16(wv), a2);
        a2 = __smlad(xo, nnrt_sxtb16_ror8(wv), a2);
    }
    n &= 3;
#else
    /* Four inputs per iteration: the loop's compare and branch once per 12 MACs. */
    for (int32_t i = n >> 2; i > 0; --i, x += 4, w0 += 4, w1 += 4, w2 += 4) {
        int32_t xv = (int32_t)x[0] + input_offset;
        a0 += w0[0] * xv;
        a1 += w1[0] * xv;
        a2 += w2[0] * xv;
        xv = (int32_t)x[1] + input_offset;
        a0 += w0[1] * xv;
        a1 += w1[1] * xv;
        a2 += w2[1] * xv;
        xv = (int32_t)x[2] + input_offset;
        a0 += w0[2] * xv;
        a1 += w1[2] * xv;
        a2 += w2[2] * xv;
        xv = (int32_t)x[3] + input_offset;
        a0 += w0[3] * xv;
        a1 += w1[3] * xv;
        a2 += w2[3] * xv;
    }
    n &= 3;
#endif
    for (int32_t d = 0; d < n; ++d) {
        const int32_t xv = (int32_t)x[d] + input_offset;
        a0 += w0[d] * xv;
        a1 += w1[d] * xv;
        a2 += w2[d] * xv;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

int32_t nnrt_dot1_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t input_offset,
                     int32_t acc)
{
#if NNRT_DSP
    const uint32_t off2 = nnrt_pair16(input_offset);
    const int8_t *x_end = x + (n & ~3);
    while (x != x_end) {
        const uint32_t xv = nnrt_ld32(x);
        const uint32_t wv = nnrt_ld32(w);
        x += 4;
        w += 4;
        acc = __smlad(__sxtab16(off2, xv), __sxtb16(wv), acc);
        acc = __smlad(nnrt_sxtab16_ror8(off2, xv), nnrt_sxtb16_ror8(wv), acc);
    }
    n &= 3;
#endif
    for (int32_t d = 0; d < n; ++d) {
        acc += w[d] * ((int32_t)x[d] + input_offset);
    }
    return acc;
}
