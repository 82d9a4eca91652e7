/*
 * int8 dot products with the input offset applied on the fly (internal/dot.h). Three
 * rows share each input word: a fourth row would not fit the registers.
 */
#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "mve_dot.h"
#include "simd.h"

void nnrt_dot3_s8(const int8_t *x, const int8_t *w, int32_t w_stride, int32_t n,
                  int32_t input_offset, int32_t acc[3])
{
#if NNRT_MVE
    nnrt_mve_dot_rows(x, w, w_stride, n, input_offset, acc, 3);
    return;
#endif
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + w_stride;
    const int8_t *w2 = w1 + w_stride;
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];
#if NNRT_DSP
    const uint32_t off2 = nnrt_pair16(input_offset);
    const int8_t *x_end = x + n;
    /* The n % 4 leading inputs first: after the loop only the accumulators and acc stay
     * live, which leaves the loop the registers it needs (the test skips the setup of
     * this loop when n % 4 == 0). */
    if ((n & 3) != 0) {
        const int32_t t = n & 3;
        for (int32_t d = 0; d < t; ++d) {
            const int32_t xv = (int32_t)x[d] + input_offset;
            a0 += w0[d] * xv;
            a1 += w1[d] * xv;
            a2 += w2[d] * xv;
        }
        x += t;
        w0 += t;
        w1 += t;
        w2 += t;
    }
    /* One chunk of 4 inputs: the input word turned by SXTAB16 into [x0 x2] [x1 x3]
     * (offset added; the second in place of the word), per row one weight word split
     * by SXTB16 and 2 SMLAD. In assembly so that nothing spills (GCC kept the end of
     * the loop on the stack: 21 instructions per chunk in C) and the pointers advance
     * in the loads: 18 instructions per 12 MACs, the compare and branch once per two
     * chunks (38 per 24 MACs). */
#define NNRT_DOT3_CHUNK                                                                      \
    "ldr %[xo], [%[x]], #4\n\t"                                                              \
    "ldr %[wv], [%[w0]], #4\n\t"                                                             \
    "sxtab16 %[xe], %[off], %[xo]\n\t"                                                       \
    "sxtab16 %[xo], %[off], %[xo], ror #8\n\t"                                               \
    "sxtb16 %[wt], %[wv]\n\t"                                                                \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                        \
    "smlad %[a0], %[xe], %[wt], %[a0]\n\t"                                                   \
    "smlad %[a0], %[xo], %[wv], %[a0]\n\t"                                                   \
    "ldr %[wv], [%[w1]], #4\n\t"                                                             \
    "sxtb16 %[wt], %[wv]\n\t"                                                                \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                        \
    "smlad %[a1], %[xe], %[wt], %[a1]\n\t"                                                   \
    "smlad %[a1], %[xo], %[wv], %[a1]\n\t"                                                   \
    "ldr %[wv], [%[w2]], #4\n\t"                                                             \
    "sxtb16 %[wt], %[wv]\n\t"                                                                \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                        \
    "smlad %[a2], %[xe], %[wt], %[a2]\n\t"                                                   \
    "smlad %[a2], %[xo], %[wv], %[a2]\n\t"
#define NNRT_DOT3_OPERANDS                                                                   \
    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [x] "+r"(x), [w0] "+r"(w0),              \
      [w1] "+r"(w1), [w2] "+r"(w2), [xe] "=&r"(xe), [xo] "=&r"(xo), [wv] "=&r"(wv),        \
      [wt] "=&r"(wt)                                                                        \
    : [off] "r"(off2), "m"(*(const int8_t(*)[8])(const void *)x),                           \
      "m"(*(const int8_t(*)[8])(const void *)w0), "m"(*(const int8_t(*)[8])(const void *)w1), \
      "m"(*(const int8_t(*)[8])(const void *)w2)
    {
        uint32_t xe;
        uint32_t xo;
        uint32_t wv;
        uint32_t wt;
#if defined(__OPTIMIZE__)
        if (((n >> 2) & 1) != 0) {
            __asm__(NNRT_DOT3_CHUNK NNRT_DOT3_OPERANDS);
        }
        while (x != x_end) {
            __asm__(NNRT_DOT3_CHUNK NNRT_DOT3_CHUNK NNRT_DOT3_OPERANDS);
        }
#else
        /* Unoptimised builds (-O0) keep a frame pointer and spill: too few registers
         * for the operands above. The same chunk in C, the same arithmetic. */
        while (x != x_end) {
            xo = nnrt_ld32(x);
            x += 4;
            xe = __sxtab16(off2, xo);
            xo = nnrt_sxtab16_ror8(off2, xo);
#define NNRT_DOT3_ROW_C(w, acc)                                                              \
    do {                                                                                     \
        wv = nnrt_ld32(w);                                                                   \
        (w) += 4;                                                                            \
        wt = __sxtb16(wv);                                                                   \
        wv = nnrt_sxtb16_ror8(wv);                                                           \
        (acc) = __smlad(xo, wv, __smlad(xe, wt, (acc)));                                     \
    } while (0)
            NNRT_DOT3_ROW_C(w0, a0);
            NNRT_DOT3_ROW_C(w1, a1);
            NNRT_DOT3_ROW_C(w2, a2);
#undef NNRT_DOT3_ROW_C
        }
#endif
    }
#undef NNRT_DOT3_CHUNK
#undef NNRT_DOT3_OPERANDS
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
    for (int32_t d = 0; d < (n & 3); ++d) {
        const int32_t xv = (int32_t)x[d] + input_offset;
        a0 += w0[d] * xv;
        a1 += w1[d] * xv;
        a2 += w2[d] * xv;
    }
#endif
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

int32_t nnrt_dot1_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t input_offset,
                     int32_t acc)
{
#if NNRT_MVE
    nnrt_mve_dot_rows(x, w, 0, n, input_offset, &acc, 1);
    return acc;
#endif
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

void nnrt_dot3_s16x8(const int16_t *x, const int8_t *w, int32_t w_stride, int32_t n,
                     int32_t acc[3])
{
    const int32_t s1 = w_stride;
    const int32_t s2 = 2 * w_stride;
    const int16_t *x_end = x + (n & ~3);
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];

#if defined(__thumb2__) && defined(__OPTIMIZE__)
    /* Thumb-2: per input one load of x and per row a load and an MLA, rows 1 and 2 at
     * register offsets from row 0's pointer, the pointers advanced by the loads: 28
     * instructions per 12 MACs and the loop's compare and branch (GCC keeps a pointer
     * per row and adds to each: 34). */
#define NNRT_DOT3_S16_STEP                                                                   \
    "ldrsh %[xv], [%[x]], #2\n\t"                                                             \
    "ldrsb %[t], [%[w], %[s1]]\n\t"                                                           \
    "mla %[a1], %[xv], %[t], %[a1]\n\t"                                                       \
    "ldrsb %[t], [%[w], %[s2]]\n\t"                                                           \
    "mla %[a2], %[xv], %[t], %[a2]\n\t"                                                       \
    "ldrsb %[t], [%[w]], #1\n\t"                                                              \
    "mla %[a0], %[xv], %[t], %[a0]\n\t"
    while (x != x_end) {
        int32_t xv;
        int32_t t;
        __asm__(NNRT_DOT3_S16_STEP NNRT_DOT3_S16_STEP NNRT_DOT3_S16_STEP NNRT_DOT3_S16_STEP
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [x] "+r"(x), [w] "+r"(w),
                  [xv] "=&r"(xv), [t] "=&r"(t)
                : [s1] "r"(s1), [s2] "r"(s2)
                : "memory");
    }
#undef NNRT_DOT3_S16_STEP
#else
    while (x != x_end) {
        for (int k = 0; k < 4; ++k) {
            const int32_t xv = x[k];
            a0 += w[k] * xv;
            a1 += w[s1 + k] * xv;
            a2 += w[s2 + k] * xv;
        }
        x += 4;
        w += 4;
    }
#endif
    for (int32_t d = 0; d < (n & 3); ++d) {
        const int32_t xv = x[d];
        a0 += w[d] * xv;
        a1 += w[s1 + d] * xv;
        a2 += w[s2 + d] * xv;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
}

int32_t nnrt_dot1_s16x8(const int16_t *x, const int8_t *w, int32_t n, int32_t acc)
{
    for (int32_t d = 0; d < n; ++d) {
        acc += w[d] * (int32_t)x[d];
    }
    return acc;
}
