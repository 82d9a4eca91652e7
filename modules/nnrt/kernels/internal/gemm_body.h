/*
 * Internal to the nnrt kernels: the bodies of the int8 matrix core (internal/gemm.h)
 * as inline functions, the one source of both
 *
 * - the generic core in libnnrt (internal/nnrt_gemm_s8.c: called with the run-time
 *   nnrt_gemm_s8_t of the op), and
 * - the model-specialised functions code generation emits (nnrt/kernels/spec.h): the
 *   same bodies called with a `static const` nnrt_gemm_s8_t whose fields (depth,
 *   channels, per-channel flag, output offset, activation range, weights) GCC folds
 *   into loop bounds and immediates.
 *
 * Both give the same bytes: the arithmetic is one text; only constants differ in how
 * they reach it. Layout of the columns and the blocking: internal/gemm.h.
 */
#ifndef NNRT_KERNELS_INTERNAL_GEMM_BODY_H_
#define NNRT_KERNELS_INTERNAL_GEMM_BODY_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gemm.h"
#include "mve_gemm.h"
#include "requant.h"
#include "rv32_gemm.h"
#include "simd.h"

static inline void nnrt_gemm_st16(uint8_t *base, size_t index, int32_t v)
{
    int16_t h = (int16_t)v;
    memcpy(base + 2 * index, &h, sizeof(h));
}

static inline int32_t nnrt_gemm_ld16(const uint8_t *base, size_t index)
{
    int16_t h;
    memcpy(&h, base + 2 * index, sizeof(h));
    return h;
}

#if NNRT_DSP
/* Halfword index of depth position kk of pixel p in the DSP layout (the tail too). */
static inline size_t nnrt_gemm_dsp_pos(int32_t p, int32_t kk)
{
    const int32_t e = kk & 3;
    return (size_t)(8 * (kk >> 2) + 4 * p + (((e & 1) << 1) | (e >> 1)));
}
#endif

#if NNRT_DSP
/*
 * `words` whole chunks of one pixel's columns: 4 int8 values of x (any alignment) each,
 * plus the offset, as the words [x0 x2] [x1 x3] at dst, dst + 4 (then dst + 16 ...).
 * At -O1 and above two chunks a loop iteration in assembly: LDR, 2 SXTAB16 and one STRD
 * a chunk (GCC's loop took 8-9 instructions, re-making the offset constant).
 */
static NNRT_ALWAYS_INLINE void nnrt_cols_words(uint8_t *dst, const int8_t *x, int32_t words,
                                               uint32_t off2)
{
    if (words & 1) {
        const uint32_t v = nnrt_ld32(x);
        nnrt_st32(dst, __sxtab16(off2, v));
        nnrt_st32(dst + 4, nnrt_sxtab16_ror8(off2, v));
        x += 4;
        dst += 16;
    }
    int32_t n = words >> 1;
#if defined(__OPTIMIZE__)
    if (n > 0) {
        uint32_t v0;
        uint32_t v1;
        uint32_t a;
        uint32_t b;
        __asm__ volatile("1:\n\t"
                         "ldr %[v0], [%[x]], #4\n\t"
                         "ldr %[v1], [%[x]], #4\n\t"
                         "sxtab16 %[a], %[off], %[v0]\n\t"
                         "sxtab16 %[b], %[off], %[v0], ror #8\n\t"
                         "strd %[a], %[b], [%[d]], #16\n\t"
                         "sxtab16 %[a], %[off], %[v1]\n\t"
                         "sxtab16 %[b], %[off], %[v1], ror #8\n\t"
                         "strd %[a], %[b], [%[d]], #16\n\t"
                         "subs %[n], %[n], #1\n\t"
                         "bne 1b\n\t"
                         : [x] "+r"(x), [d] "+r"(dst), [n] "+r"(n), [v0] "=&r"(v0),
                           [v1] "=&r"(v1), [a] "=&r"(a), [b] "=&r"(b)
                         : [off] "r"(off2)
                         : "cc", "memory");
    }
#else
    for (; n > 0; --n, x += 8, dst += 32) {
        const uint32_t v0 = nnrt_ld32(x);
        const uint32_t v1 = nnrt_ld32(x + 4);
        nnrt_st32(dst, __sxtab16(off2, v0));
        nnrt_st32(dst + 4, nnrt_sxtab16_ror8(off2, v0));
        nnrt_st32(dst + 16, __sxtab16(off2, v1));
        nnrt_st32(dst + 20, nnrt_sxtab16_ror8(off2, v1));
    }
#endif
}
#endif

/* nnrt_cols_put_s8() (gemm.h). */
static NNRT_ALWAYS_INLINE void nnrt_cols_put_body(void *cols, int32_t k, int32_t p, int32_t k0,
                                                  const int8_t *x, int32_t n,
                                                  int32_t input_offset)
{
    uint8_t *c = (uint8_t *)cols;
    int32_t i = 0;
#if NNRT_MVE
    nnrt_mve_cols_put(cols, k, p, k0, x, n, input_offset);
    (void)c;
    (void)i;
#elif NNRT_DSP
    (void)k; /* the layout of a position does not depend on the depth */
    if ((k0 & 3) == 0) {
        i = n & ~3; /* whole chunks (the last may be the partial one: n past k) */
        nnrt_cols_words(c + 16 * (size_t)(k0 >> 2) + 8 * (size_t)p, x, i >> 2,
                        nnrt_pair16(input_offset));
    }
    for (; i < n; ++i) {
        nnrt_gemm_st16(c, nnrt_gemm_dsp_pos(p, k0 + i), (int32_t)x[i] + input_offset);
    }
#elif NNRT_RV32
    (void)c;
    (void)i;
    nnrt_rv_cols_put((int16_t *)cols + (size_t)p * (size_t)k + (size_t)k0, x, n, input_offset);
#elif NNRT_GEMM_PACKED
    /* word k0 + i: pixel 0 stores x + off + off * 2^23, pixel 1 adds its x * 2^23 */
    uint32_t *dst = (uint32_t *)(void *)c + k0;
    (void)k;
    if (p == 0) {
        const uint32_t base = (uint32_t)input_offset + ((uint32_t)input_offset << 23);
        for (; i < n; ++i) {
            dst[i] = base + (uint32_t)(int32_t)x[i];
        }
    } else {
        for (; i < n; ++i) {
            dst[i] += (uint32_t)(int32_t)x[i] << 23;
        }
    }
#else
    int16_t *dst = (int16_t *)cols + (size_t)p * (size_t)k + (size_t)k0;
    (void)c;
    for (; i < n; ++i) {
        dst[i] = (int16_t)((int32_t)x[i] + input_offset);
    }
#endif
}

/*
 * nnrt_cols_put_body() of a whole column (k0 = 0, n = k) from a source readable up to
 * a multiple of 4 bytes (a staged patch: its area holds (k + 3) & ~3): on DSP cores the
 * partial last chunk converted whole, its positions past k read against weights of 0.
 */
static NNRT_ALWAYS_INLINE void nnrt_cols_put_padded_body(void *cols, int32_t k, int32_t p,
                                                         const int8_t *x, int32_t input_offset)
{
#if NNRT_DSP && !NNRT_MVE
    nnrt_cols_put_body(cols, k, p, 0, x, (k + 3) & ~3, input_offset);
#else
    nnrt_cols_put_body(cols, k, p, 0, x, k, input_offset);
#endif
}

/*
 * The 2 x 2 accumulators of filter rows w0 / w1 over the columns of both pixels:
 * a[0] = (pixel 0, w0), a[1] = (pixel 1, w0), a[2] = (pixel 0, w1), a[3] = (pixel 1, w1),
 * added to their start values.
 */
static NNRT_ALWAYS_INLINE void nnrt_gemm_mac_2x2(const void *cols, int32_t k, const int8_t *w0,
                                                 const int8_t *w1, int32_t a[4])
{
#if NNRT_MVE
    nnrt_mve_mac_2x2(cols, k, w0, w1, a);
    return;
#endif
    int32_t a00 = a[0];
    int32_t a01 = a[1];
    int32_t a10 = a[2];
    int32_t a11 = a[3];
#if NNRT_DSP
    const uint8_t *c = (const uint8_t *)cols;
    const uint8_t *c_end = c + 16 * (size_t)(k >> 2);
    /* One chunk of 4 depth positions: the columns of both pixels in two LDRD (post-
     * indexed), one weight word per row split by SXTB16 into [w0 w2] [w1 w3], 8 SMLAD.
     * In assembly so that the column loads stay LDRD pairs and the pointers advance in
     * the loads: 16 instructions per 16 multiply-adds, and the loop's compare and branch
     * once per two chunks. */
#define NNRT_GEMM_CHUNK                                                                       \
    "ldrd %[x0], %[x1], [%[c]], #8\n\t"                                                       \
    "ldr %[wv], [%[w0]], #4\n\t"                                                              \
    "ldrd %[x2], %[x3], [%[c]], #8\n\t"                                                       \
    "sxtb16 %[we], %[wv]\n\t"                                                                 \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                         \
    "smlad %[a00], %[x0], %[we], %[a00]\n\t"                                                  \
    "smlad %[a01], %[x2], %[we], %[a01]\n\t"                                                  \
    "smlad %[a00], %[x1], %[wv], %[a00]\n\t"                                                  \
    "smlad %[a01], %[x3], %[wv], %[a01]\n\t"                                                  \
    "ldr %[wv], [%[w1]], #4\n\t"                                                              \
    "sxtb16 %[we], %[wv]\n\t"                                                                 \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                         \
    "smlad %[a10], %[x0], %[we], %[a10]\n\t"                                                  \
    "smlad %[a11], %[x2], %[we], %[a11]\n\t"                                                  \
    "smlad %[a10], %[x1], %[wv], %[a10]\n\t"                                                  \
    "smlad %[a11], %[x3], %[wv], %[a11]\n\t"
#define NNRT_GEMM_CHUNK_OPERANDS                                                              \
    : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [c] "+r"(c),       \
      [w0] "+r"(w0), [w1] "+r"(w1), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2),           \
      [x3] "=&r"(x3), [wv] "=&r"(wv), [we] "=&r"(we)                                          \
    : "m"(*(const uint8_t(*)[16])(const void *)c), "m"(*(const int8_t(*)[4])w0),             \
      "m"(*(const int8_t(*)[4])w1)
    {
        uint32_t x0;
        uint32_t x1;
        uint32_t x2;
        uint32_t x3;
        uint32_t wv;
        uint32_t we;
#if defined(__OPTIMIZE__)
        if (((k >> 2) & 1) != 0) {
            __asm__(NNRT_GEMM_CHUNK NNRT_GEMM_CHUNK_OPERANDS);
        }
        while (c != c_end) {
            __asm__(NNRT_GEMM_CHUNK NNRT_GEMM_CHUNK NNRT_GEMM_CHUNK_OPERANDS);
        }
#else
        /* Unoptimised builds (-O0, Zephyr's CONFIG_NO_OPTIMIZATIONS) keep a frame
         * pointer and spill, which leaves too few registers for the 13 operands above
         * ("impossible constraints"): the same chunk in C, the same arithmetic. */
        while (c != c_end) {
            x0 = nnrt_ld32(c);
            x1 = nnrt_ld32(c + 4);
            x2 = nnrt_ld32(c + 8);
            x3 = nnrt_ld32(c + 12);
            c += 16;
            /* one filter row's word split by SXTB16 into [w0 w2] [w1 w3], 4 SMLAD */
#define NNRT_GEMM_ROW_C(w, acc0, acc1)                                                        \
    do {                                                                                      \
        wv = nnrt_ld32(w);                                                                    \
        we = __sxtb16(wv);                                                                    \
        wv = nnrt_sxtb16_ror8(wv);                                                            \
        (w) += 4;                                                                             \
        (acc0) = __smlad(x1, wv, __smlad(x0, we, (acc0)));                                    \
        (acc1) = __smlad(x3, wv, __smlad(x2, we, (acc1)));                                    \
    } while (0)
            NNRT_GEMM_ROW_C(w0, a00, a01);
            NNRT_GEMM_ROW_C(w1, a10, a11);
#undef NNRT_GEMM_ROW_C
        }
#endif
    }
#undef NNRT_GEMM_CHUNK
#undef NNRT_GEMM_CHUNK_OPERANDS
    for (int32_t t = 0; t < (k & 3); ++t) { /* the partial last chunk */
        const int32_t x0 = nnrt_gemm_ld16(c, nnrt_gemm_dsp_pos(0, t));
        const int32_t x1 = nnrt_gemm_ld16(c, nnrt_gemm_dsp_pos(1, t));
        a00 += w0[t] * x0;
        a01 += w0[t] * x1;
        a10 += w1[t] * x0;
        a11 += w1[t] * x1;
    }
#elif NNRT_GEMM_PACKED
    /* Both pixels per SMLAL (gemm.h's packed columns): per channel the 64-bit sum
     * (lo, hi) = sum_0 + sum_1 * 2^23, sum_0 split off every 128 positions (its low
     * 23 bits, sign extended: |sum_0| < 2^22 by then) and the rest kept. */
    const uint32_t *c = (const uint32_t *)cols;
    uint32_t lo0 = 0;
    uint32_t hi0 = 0;
    uint32_t lo1 = 0;
    uint32_t hi1 = 0;
    const int32_t d1 = (int32_t)(w1 - w0) - 1; /* row 1 from row 0's advanced pointer */
    for (int32_t rem = k; rem > 0;) {
        int32_t n = rem < 128 ? rem : 128;
        rem -= n;
#if defined(__OPTIMIZE__)
        /* 4 positions: their 4 column words in one LDM, per row and position LDRSB and
         * SMLAL (row 1 at a register offset from row 0's post-indexed pointer): 19
         * instructions per 16 multiply-adds with the loop's SUBS and BNE. */
        int32_t q = n >> 2;
        if (q > 0) {
            /* pinned in ascending order: LDM fills its register list in register order */
            register uint32_t xa __asm__("r8");
            register uint32_t xb __asm__("r9");
            register uint32_t xc __asm__("r10");
            register uint32_t xd __asm__("r11");
            int32_t wv;
#define NNRT_GEMM_PK(x)                                                                       \
    "ldrsb %[wv], [%[w], %[d1]]\n\t"                                                        \
    "smlal %[lo1], %[hi1], " x ", %[wv]\n\t"
            __asm__("1:\n\t"
                    "ldm %[c]!, {%[xa], %[xb], %[xc], %[xd]}\n\t"
                    "ldrsb %[wv], [%[w]], #1\n\t"
                    "smlal %[lo0], %[hi0], %[xa], %[wv]\n\t"
                    NNRT_GEMM_PK("%[xa]")
                    "ldrsb %[wv], [%[w]], #1\n\t"
                    "smlal %[lo0], %[hi0], %[xb], %[wv]\n\t"
                    NNRT_GEMM_PK("%[xb]")
                    "ldrsb %[wv], [%[w]], #1\n\t"
                    "smlal %[lo0], %[hi0], %[xc], %[wv]\n\t"
                    NNRT_GEMM_PK("%[xc]")
                    "ldrsb %[wv], [%[w]], #1\n\t"
                    "smlal %[lo0], %[hi0], %[xd], %[wv]\n\t"
                    NNRT_GEMM_PK("%[xd]")
                    "subs %[q], %[q], #1\n\t"
                    "bne 1b\n\t"
                    : [lo0] "+r"(lo0), [hi0] "+r"(hi0), [lo1] "+r"(lo1), [hi1] "+r"(hi1),
                      [c] "+r"(c), [w] "+r"(w0), [q] "+r"(q), [xa] "=&r"(xa),
                      [xb] "=&r"(xb), [xc] "=&r"(xc), [xd] "=&r"(xd), [wv] "=&r"(wv)
                    : [d1] "r"(d1)
                    : "cc", "memory");
#undef NNRT_GEMM_PK
            n &= 3;
        }
#endif
        for (; n > 0; --n, ++c, ++w0) {
            const int64_t x = (int32_t)c[0];
            uint64_t t0 = ((uint64_t)hi0 << 32 | lo0) + (uint64_t)(x * w0[0]);
            uint64_t t1 = ((uint64_t)hi1 << 32 | lo1) + (uint64_t)(x * w0[d1 + 1]);
            lo0 = (uint32_t)t0;
            hi0 = (uint32_t)(t0 >> 32);
            lo1 = (uint32_t)t1;
            hi1 = (uint32_t)(t1 >> 32);
        }
        /* the low 23 bits, sign extended (SBFX), moved to the pixel 0 sums */
        const int32_t l0 = (int32_t)(lo0 << 9) >> 9;
        const int32_t l1 = (int32_t)(lo1 << 9) >> 9;
        const uint64_t r0 = ((uint64_t)hi0 << 32 | lo0) - (uint64_t)(int64_t)l0;
        const uint64_t r1 = ((uint64_t)hi1 << 32 | lo1) - (uint64_t)(int64_t)l1;
        a00 += l0;
        a10 += l1;
        lo0 = (uint32_t)r0;
        hi0 = (uint32_t)(r0 >> 32);
        lo1 = (uint32_t)r1;
        hi1 = (uint32_t)(r1 >> 32);
    }
    /* what is left is sum_1 * 2^23 */
    a01 += (int32_t)(lo0 >> 23 | hi0 << 9);
    a11 += (int32_t)(lo1 >> 23 | hi1 << 9);
#else
    const int16_t *x0 = (const int16_t *)cols;
    const int16_t *x1 = x0 + k;
    /* Four depth positions per iteration: the loop's compare and branch once per 16
     * multiply-adds (no SIMD here, so loads and MLAs cannot shrink further). */
    for (int32_t n = k >> 2; n > 0; --n, x0 += 4, x1 += 4, w0 += 4, w1 += 4) {
        int32_t wa = w0[0];
        int32_t wb = w1[0];
        a00 += wa * x0[0];
        a01 += wa * x1[0];
        a10 += wb * x0[0];
        a11 += wb * x1[0];
        wa = w0[1];
        wb = w1[1];
        a00 += wa * x0[1];
        a01 += wa * x1[1];
        a10 += wb * x0[1];
        a11 += wb * x1[1];
        wa = w0[2];
        wb = w1[2];
        a00 += wa * x0[2];
        a01 += wa * x1[2];
        a10 += wb * x0[2];
        a11 += wb * x1[2];
        wa = w0[3];
        wb = w1[3];
        a00 += wa * x0[3];
        a01 += wa * x1[3];
        a10 += wb * x0[3];
        a11 += wb * x1[3];
    }
    for (int32_t j = 0; j < (k & 3); ++j) {
        const int32_t wa = w0[j];
        const int32_t wb = w1[j];
        a00 += wa * x0[j];
        a01 += wa * x1[j];
        a10 += wb * x0[j];
        a11 += wb * x1[j];
    }
#endif
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

/* What every channel pair of one pixel pair needs. */
typedef struct {
    const nnrt_gemm_s8_t *g;
    const void *cols;
    int8_t *out0;
    int8_t *out1;
} nnrt_gemm_pass_t;

/** Channels [oc, n) of a pixel pair from the channel records of g, in C (libnnrt):
 * what the assembly pair loop of a specialised op leaves. */
void nnrt_gemm_pairs_rq_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                           int32_t n);

/** The channel pairs of a pixel pair: the function each caller instantiates from
 * nnrt_gemm_pair_body() and hands to nnrt_gemm_2px_body(). DSP, packed and RV32 builds:
 * channels [oc, n). Portable builds: one pair, channels oc and oc + n (n = 1; 0 for an odd last
 * channel), a constant at each call so that GCC's clones fold it. */
typedef void (*nnrt_gemm_pair_fn)(const nnrt_gemm_pass_t *x, int32_t oc, int32_t n);

/* The four outputs of a block (before the output stage: offset added, not clamped):
 * saturated, clamped to the activation range where stage 1, stored. */
static NNRT_ALWAYS_INLINE void nnrt_gemm_put4(const nnrt_gemm_s8_t *g, int32_t v00,
                                              int32_t v01, int32_t v10, int32_t v11,
                                              int8_t *out0, int8_t *out1, int32_t oc,
                                              int32_t oc1)
{
    v00 = nnrt_sat8(v00);
    v01 = nnrt_sat8(v01);
    v10 = nnrt_sat8(v10);
    v11 = nnrt_sat8(v11);
    if (g->stage == 1) {
        const int32_t lo = g->act_min;
        const int32_t hi = g->act_max;
        v00 = v00 < lo ? lo : (v00 > hi ? hi : v00);
        v01 = v01 < lo ? lo : (v01 > hi ? hi : v01);
        v10 = v10 < lo ? lo : (v10 > hi ? hi : v10);
        v11 = v11 < lo ? lo : (v11 > hi ? hi : v11);
    }
    out0[oc] = (int8_t)v00;
    out1[oc] = (int8_t)v01;
    out0[oc1] = (int8_t)v10;
    out1[oc1] = (int8_t)v11;
}

/*
 * The output stage of channels oc and oc + d (d = 1; d = 0 for an odd last channel) of
 * one pixel pair: their accumulators a (as nnrt_gemm_mac_2x2() leaves them) requantised
 * in the fast form, or by the reference where a shift is outside it (all_fast: 1 when
 * every shift is known to take the fast form, build time; 0: tested per pair).
 */
static NNRT_ALWAYS_INLINE void nnrt_gemm_out_pair(const nnrt_gemm_s8_t *g, const int32_t a[4],
                                                  int8_t *out0, int8_t *out1, int32_t oc,
                                                  int32_t d, int all_fast)
{
    const int32_t oc1 = oc + d;
    const int32_t q0 = g->per_channel ? oc : 0;
    const int32_t q1 = g->per_channel ? oc1 : 0;
    const int32_t e0 = -g->shift[q0] - 2;
    const int32_t e1 = -g->shift[q1] - 2;
    if (!all_fast && ((uint32_t)e0 > 29u || (uint32_t)e1 > 29u)) {
        nnrt_gemm_pair_ref(g, oc, d, a[0], a[1], a[2], a[3], out0, out1);
        return;
    }
    const int32_t off = g->output_offset;
    const int32_t m0 = g->multiplier[q0];
    const int32_t m1 = g->multiplier[q1];
    nnrt_gemm_put4(g, nnrt_rqf_fast(a[0], m0, 1 << e0, e0 + 1) + off,
                   nnrt_rqf_fast(a[1], m0, 1 << e0, e0 + 1) + off,
                   nnrt_rqf_fast(a[2], m1, 1 << e1, e1 + 1) + off,
                   nnrt_rqf_fast(a[3], m1, 1 << e1, e1 + 1) + off, out0, out1, oc, oc1);
}

/*
 * Channels oc and oc + d (d = 1; d = 0 for an odd last channel) of one pixel pair, for
 * the core g. all_fast: 1 when every channel's shift is known to take the fast form
 * (build time), 0: tested per pair. Requantisation in the fast form (requant.h): with
 * e' = e - 2 = -shift - 2 in [0, 29] the half is 2^e' and the shift e - 1 is e' + 1.
 */
static NNRT_ALWAYS_INLINE void nnrt_gemm_pair1(const nnrt_gemm_s8_t *g, const void *cols,
                                               int8_t *out0, int8_t *out1, int32_t oc,
                                               int32_t d, int all_fast)
{
    const int32_t k = g->k;
    const int32_t oc1 = oc + d;
    const int8_t *w0 = g->filter + (size_t)oc * (size_t)k;
    int32_t a[4] = {0, 0, 0, 0};
    if (g->bias != NULL) {
        a[0] = a[1] = g->bias[oc];
        a[2] = a[3] = g->bias[oc1];
    }
    nnrt_gemm_mac_2x2(cols, k, w0, w0 + (size_t)d * (size_t)k, a);
    nnrt_gemm_out_pair(g, a, out0, out1, oc, d, all_fast);
}

/* nnrt_gemm_pair1() for a core with channel records (g->rq): the biases and output
 * stage from the records, the same values. */
static NNRT_ALWAYS_INLINE void nnrt_gemm_pair1_rq(const nnrt_gemm_s8_t *g, const void *cols,
                                                  int8_t *out0, int8_t *out1, int32_t oc,
                                                  int32_t d)
{
    const int32_t k = g->k;
    const int32_t oc1 = oc + d;
    const int8_t *w0 = g->filter + (size_t)oc * (size_t)k;
    const int32_t b0 = nnrt_gemm_rq_bias(g->rq, oc);
    const int32_t b1 = nnrt_gemm_rq_bias(g->rq, oc1);
    int32_t a[4] = {b0, b0, b1, b1};
    nnrt_gemm_mac_2x2(cols, k, w0, w0 + (size_t)d * (size_t)k, a);
    const int32_t *r0 = nnrt_gemm_rq_ch(g->rq, oc);
    const int32_t *r1 = nnrt_gemm_rq_ch(g->rq, oc1);
    nnrt_gemm_put4(g, nnrt_gemm_rq_out(a[0], r0), nnrt_gemm_rq_out(a[1], r0),
                   nnrt_gemm_rq_out(a[2], r1), nnrt_gemm_rq_out(a[3], r1), out0, out1, oc,
                   oc1);
}

#if NNRT_DSP && defined(__OPTIMIZE__)
/*
 * Whether the assembly pair loop below takes the core g (one with channel records):
 * its depth, channel count and activation range known at build time (a specialised op;
 * GCC folds its constant core), the offsets it uses within the immediate ranges of
 * LDR / STRB.
 */
#define NNRT_GEMM_ASM_OK(g)                                                                   \
    (!NNRT_MVE && __builtin_constant_p((g)->k) && __builtin_constant_p((g)->oc)                            \
     && __builtin_constant_p((g)->act_min) && __builtin_constant_p((g)->act_max)            \
     && __builtin_constant_p((g)->stage) && (g)->k <= 4092 && (g)->oc <= 4094)

/*
 * All channel pairs [0, oc & ~1) of one pixel pair (pixel 1's outputs oc bytes after
 * pixel 0's) from the channel records, in one block of assembly: GCC's allocation of
 * the loop around the depth loop spilled and recomputed the output stage per pair
 * (about 90 instructions a pair); here 33 besides the depth loop, none spilled.
 *
 * 13 registers: the four accumulators and the filter pointer throughout; the others
 * change role between the depth loop (cols pointer and end, 4 column words, 2 weight
 * halves) and the output stage (output pointer, record pointer, the constant 2^30,
 * mult / addend / rsh, the 64-bit sum), the three live ones pushed across the depth
 * loop (PUSH / POP: one instruction each). The columns' start and end stay on the stack
 * (one LDRD a pair). Per pair:
 *
 * - LDRD of both biases: the first chunk's SMLADs accumulate onto them (no moves);
 * - the depth loop of nnrt_gemm_mac_2x2(), row 1's weights at row 0 + k (an immediate
 *   offset: no second filter pointer), its K % 4 tail as MLAs;
 * - per output: hi = addend + (acc >> 31) (ADD with a shifted operand), lo = 2^30 ^
 *   (hi << 31) (EOR: hi's low bit is the sign, the addend being even), SMLAL, ASR by
 *   rsh, SSAT, the clamps of a narrower range (immediates), STRB post-indexed:
 *   nnrt_rq_fold() + the output offset in 6 instructions;
 * - a channel's record in one LDM;
 * - the loop ends after the pair whose second rsh has NNRT_GEMM_RQ_LAST set (TST).
 *
 * Bit-exact with nnrt_gemm_pair1_rq(): the same sums in the same int32 arithmetic and
 * the same 64-bit start value.
 */
/* register roles: depth loop / output stage */
#define NNRT_GA_C "%[o]"   /* cols pointer / output pointer */
#define NNRT_GA_END "%[r]" /* cols end / record pointer */
#define NNRT_GA_X0 "%[q]"  /* column word / 2^30 (cols base on entry) */
#define NNRT_GA_X1 "%[m]"  /* column word / multiplier */
#define NNRT_GA_X2 "%[ad]" /* column word / addend */
#define NNRT_GA_X3 "%[rs]" /* column word / rsh */
#define NNRT_GA_WV "%[lo]" /* weight halves / low word of the sum */
#define NNRT_GA_WE "%[hi]" /* weight halves / high word of the sum */
/* one chunk of 4 depth positions (as nnrt_gemm_mac_2x2()); first: onto the biases */
#define NNRT_GA_LOADS                                                                         \
    "ldrd " NNRT_GA_X0 ", " NNRT_GA_X1 ", [" NNRT_GA_C "], #8\n\t"                            \
    "ldr " NNRT_GA_WV ", [%[w]], #4\n\t"                                                      \
    "ldrd " NNRT_GA_X2 ", " NNRT_GA_X3 ", [" NNRT_GA_C "], #8\n\t"                            \
    "sxtb16 " NNRT_GA_WE ", " NNRT_GA_WV "\n\t"                                               \
    "sxtb16 " NNRT_GA_WV ", " NNRT_GA_WV ", ror #8\n\t"
#define NNRT_GA_ROW1                                                                          \
    "ldr " NNRT_GA_WV ", [%[w], #%c[k] - 4]\n\t"                                              \
    "sxtb16 " NNRT_GA_WE ", " NNRT_GA_WV "\n\t"                                               \
    "sxtb16 " NNRT_GA_WV ", " NNRT_GA_WV ", ror #8\n\t"
#define NNRT_GA_MACS(a0, a1, s0, s1)                                                          \
    "smlad " a1 ", " NNRT_GA_X2 ", " NNRT_GA_WE ", " s1 "\n\t"                                \
    "smlad " a0 ", " NNRT_GA_X0 ", " NNRT_GA_WE ", " s0 "\n\t"                                \
    "smlad " a0 ", " NNRT_GA_X1 ", " NNRT_GA_WV ", " a0 "\n\t"                                \
    "smlad " a1 ", " NNRT_GA_X3 ", " NNRT_GA_WV ", " a1 "\n\t"
#define NNRT_GA_CHUNK                                                                         \
    NNRT_GA_LOADS NNRT_GA_MACS("%[a00]", "%[a01]", "%[a00]", "%[a01]")                        \
    NNRT_GA_ROW1 NNRT_GA_MACS("%[a10]", "%[a11]", "%[a10]", "%[a11]")
#define NNRT_GA_FIRST                                                                         \
    NNRT_GA_LOADS NNRT_GA_MACS("%[a00]", "%[a01]", "%[a00]", "%[a00]")                        \
    NNRT_GA_ROW1 NNRT_GA_MACS("%[a10]", "%[a11]", "%[a10]", "%[a10]")
/* depth position k - tail + t of the K % 4 tail (C at the partial last chunk of the
 * columns: position t at halfword ((t & 1) << 1) | (t >> 1), pixel 1's 8 bytes on) */
#define NNRT_GA_TAIL(t, h)                                                                    \
    ".if %c[tail] > " #t "\n\t"                                                               \
    "ldrsh " NNRT_GA_X0 ", [" NNRT_GA_C ", #2 * " #h "]\n\t"                                  \
    "ldrsh " NNRT_GA_X1 ", [" NNRT_GA_C ", #8 + 2 * " #h "]\n\t"                              \
    "ldrsb " NNRT_GA_WV ", [%[w], #" #t "]\n\t"                                               \
    "ldrsb " NNRT_GA_WE ", [%[w], #%c[k] + " #t "]\n\t"                                       \
    "mla %[a00], " NNRT_GA_WV ", " NNRT_GA_X0 ", %[a00]\n\t"                                  \
    "mla %[a01], " NNRT_GA_WV ", " NNRT_GA_X1 ", %[a01]\n\t"                                  \
    "mla %[a10], " NNRT_GA_WE ", " NNRT_GA_X0 ", %[a10]\n\t"                                  \
    "mla %[a11], " NNRT_GA_WE ", " NNRT_GA_X1 ", %[a11]\n\t"                                  \
    ".endif\n\t"
/* a tail of 3 as one more chunk: each row's last 4 bytes shifted down a byte (the
 * missing fourth weight 0, so the chunk's unused column position adds nothing); needs
 * a whole chunk before it (the load starts a byte before the tail) */
#define NNRT_GA_TAIL3                                                                         \
    "ldrd " NNRT_GA_X0 ", " NNRT_GA_X1 ", [" NNRT_GA_C "]\n\t"                                \
    "ldrd " NNRT_GA_X2 ", " NNRT_GA_X3 ", [" NNRT_GA_C ", #8]\n\t"                            \
    "ldr " NNRT_GA_WV ", [%[w], #-1]\n\t"                                                     \
    "lsr " NNRT_GA_WV ", " NNRT_GA_WV ", #8\n\t"                                              \
    "sxtb16 " NNRT_GA_WE ", " NNRT_GA_WV "\n\t"                                               \
    "sxtb16 " NNRT_GA_WV ", " NNRT_GA_WV ", ror #8\n\t"                                       \
    NNRT_GA_MACS("%[a00]", "%[a01]", "%[a00]", "%[a01]")                                      \
    "ldr " NNRT_GA_WV ", [%[w], #%c[k] - 1]\n\t"                                              \
    "lsr " NNRT_GA_WV ", " NNRT_GA_WV ", #8\n\t"                                              \
    "sxtb16 " NNRT_GA_WE ", " NNRT_GA_WV "\n\t"                                               \
    "sxtb16 " NNRT_GA_WV ", " NNRT_GA_WV ", ror #8\n\t"                                       \
    NNRT_GA_MACS("%[a10]", "%[a11]", "%[a10]", "%[a11]")
/* one output: acc requantised by the record in m / ad / rs, stored by `store` */
#define NNRT_GA_OUT(acc, store)                                                               \
    "add %[hi], %[ad], " acc ", asr #31\n\t"                                                  \
    "eor %[lo], %[q], %[hi], lsl #31\n\t"                                                     \
    "smlal %[lo], %[hi], " acc ", %[m]\n\t"                                                   \
    "asr %[hi], %[hi], %[rs]\n\t"                                                             \
    "ssat %[hi], #8, %[hi]\n\t"                                                               \
    ".if %c[stage] == 1\n\t"                                                                  \
    ".if %c[lo8] > -128\n\t"                                                                  \
    "cmp %[hi], #%c[lo8]\n\t"                                                                 \
    "it lt\n\t"                                                                               \
    "movlt %[hi], #%c[lo8]\n\t"                                                               \
    ".endif\n\t"                                                                              \
    ".if %c[hi8] < 127\n\t"                                                                   \
    "cmp %[hi], #%c[hi8]\n\t"                                                                 \
    "it gt\n\t"                                                                               \
    "movgt %[hi], #%c[hi8]\n\t"                                                               \
    ".endif\n\t"                                                                              \
    ".endif\n\t" store "\n\t"
#define NNRT_GA_CHANNEL(acc0, acc1)                                                           \
    "ldm %[r]!, {%[m], %[ad], %[rs]}\n\t"                                                     \
    NNRT_GA_OUT(acc1, "strb %[hi], [%[o], #%c[oc]]")                                          \
    NNRT_GA_OUT(acc0, "strb %[hi], [%[o]], #1")

/* The depth loop's chunks after the first (r = kc - 1 of them, kc = K / 4 known):
 * where it saves instructions (r = 4 or r >= 6), four a pass (the compare and branch
 * once per 64 MACs), the loop entered where the remainder starts (one branch a pair:
 * 2 * ceil(r / 4) + (r % 4 != 0) instructions of loop control); otherwise two a pass,
 * an odd one before (2 * floor(r / 2)). `next` is one chunk; `end` the pass's compare and
 * branch back to 2 (NNRT_GA_LOOP_TO: the int16 blocks' reads the end from the stack). */
#define NNRT_GA_LOOP_TO(next, end)                                                            \
    ".if %c[kc] == 5 || %c[kc] >= 7\n\t"                                                       \
    ".if ((%c[kc] - 1) & 3) == 3\n\t"                                                         \
    "b 3f\n\t"                                                                                \
    ".elseif ((%c[kc] - 1) & 3) == 2\n\t"                                                     \
    "b 4f\n\t"                                                                                \
    ".elseif ((%c[kc] - 1) & 3) == 1\n\t"                                                     \
    "b 5f\n\t"                                                                                \
    ".endif\n"                                                                                 \
    "2:\n\t" next "3:\n\t" next "4:\n\t" next "5:\n\t" next end                         \
    ".else\n\t"                                                                               \
    ".if (%c[kc] - 1) & 1\n\t" next ".endif\n\t"                                              \
    ".if %c[kc] > 2\n"                                                                         \
    "2:\n\t" next next end                                                                    \
    ".endif\n\t"                                                                              \
    ".endif\n\t"
#define NNRT_GA_LOOP(next)                                                                    \
    NNRT_GA_LOOP_TO(next, "cmp " NNRT_GA_C ", " NNRT_GA_END "\n\tbne 2b\n\t")

/* The pair loops' registers (both variants below) */
#define NNRT_GA_REGS                                                                          \
    register const void *q __asm__("r4") = cols;                                              \
    register int8_t *o __asm__("r5") = out0;                                                  \
    register const int32_t *r __asm__("r6") = g->rq;                                          \
    register int32_t m __asm__("r8");                                                         \
    register int32_t ad __asm__("r9");                                                        \
    register int32_t rs __asm__("r10");                                                       \
    const int8_t *w = g->filter;                                                              \
    int32_t a00;                                                                              \
    int32_t a01;                                                                              \
    int32_t a10;                                                                              \
    int32_t a11;                                                                              \
    int32_t lo;                                                                               \
    int32_t hi;
/* the columns' start and end on the stack, 2^30 in q; per pair (label 1) both biases,
 * the output-stage registers pushed, the columns' bounds loaded */
#define NNRT_GA_PROLOGUE                                                                      \
    ".if %c[kb] < 4096\n\t"                                                                   \
    "addw %[hi], %[q], #%c[kb]\n\t"                                                           \
    ".else\n\t"                                                                               \
    "movw %[hi], #%c[kb]\n\t"                                                                 \
    "add %[hi], %[hi], %[q]\n\t"                                                              \
    ".endif\n\t"                                                                              \
    "strd %[q], %[hi], [sp, #-8]!\n\t"                                                        \
    "mov %[q], #0x40000000\n"                                                                 \
    "1:\n\t"                                                                                  \
    "ldrd %[a00], %[a10], [%[r]], #8\n\t"                                                     \
    "push {%[q], %[o], %[r]}\n\t"                                                             \
    "ldrd " NNRT_GA_C ", " NNRT_GA_END ", [sp, #12]\n\t"

/* after the depth loop: the pair's output stage, the next pair or the end; the outputs */
#define NNRT_GA_EPILOGUE                                                                      \
    "pop {%[q], %[o], %[r]}\n\t"                                                              \
    NNRT_GA_CHANNEL("%[a00]", "%[a01]")                                                       \
    NNRT_GA_CHANNEL("%[a10]", "%[a11]")                                                       \
    "tst %[rs], #%c[last]\n\t"                                                                \
    "beq 1b\n\t"                                                                              \
    "add sp, sp, #8\n\t"                                                                      \
    : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [w] "+r"(w),   \
      [o] "+r"(o), [r] "+r"(r), [q] "+r"(q), [m] "=&r"(m), [ad] "=&r"(ad), [rs] "=&r"(rs),    \
      [lo] "=&r"(lo), [hi] "=&r"(hi)

static NNRT_ALWAYS_INLINE void nnrt_gemm_pairs_asm(const nnrt_gemm_s8_t *g, const void *cols,
                                                   int8_t *out0)
{
    /* pinned, each list in ascending order: the PUSH / POP of the loop and the LDM of
     * a record (register lists load and store in register order; the others are GCC's
     * choice; r7, a frame pointer in some builds, is left to GCC) */
    NNRT_GA_REGS
    __asm__ volatile(
        NNRT_GA_PROLOGUE
        ".if %c[kc] > 0\n\t"
        NNRT_GA_FIRST
        NNRT_GA_LOOP(NNRT_GA_CHUNK)
        ".else\n\t"
        "mov %[a01], %[a00]\n\t"
        "mov %[a11], %[a10]\n\t"
        ".endif\n\t"
        ".if %c[tail] == 3 && %c[kc] > 0\n\t"
        NNRT_GA_TAIL3
        ".else\n\t"
        NNRT_GA_TAIL(0, 0) NNRT_GA_TAIL(1, 2) NNRT_GA_TAIL(2, 1)
        ".endif\n\t"
        "addw %[w], %[w], #%c[k] + %c[tail]\n\t"
        NNRT_GA_EPILOGUE
        : [k] "i"(g->k), [kc] "i"(g->k >> 2), [kb] "i"(16 * (g->k >> 2)),
          [tail] "i"(g->k & 3), [oc] "i"(g->oc), [stage] "i"(g->stage),
          [lo8] "i"(g->act_min), [hi8] "i"(g->act_max), [last] "i"(NNRT_GEMM_RQ_LAST)
        : "cc", "memory");
}
/*
 * nnrt_gemm_pairs_asm() for weights in the pair-row layout (NNRT_GEMM_RP_* below):
 * per chunk of 4 depth positions and channel pair (a, b) the two words E = [h0 h2] and
 * O = [h1 h3] of the halfwords h_i = 256 * w_b[i] + w_a[i], read by one LDRD. SMLAD of
 * the raw words accumulates the mixed sum 256 * b + a of each pixel, SXTB16 in place
 * leaves [w_a0 w_a2] [w_a1 w_a3] and 4 more SMLAD give a alone: per 16 MACs 3 LDRD,
 * 2 SXTB16 and 8 SMLAD (13 instructions; the row-major loop above: 17). After the depth
 * loop b = (mixed - a) >> 8 (2 instructions an output). The accumulators of channel b
 * (a10, a11) hold the mixed sums during the loop, started from the record's second word
 * (bias_a + 256 * bias_b: nnrt_gemm_pair_body_rp()). Same registers and output stage as
 * nnrt_gemm_pairs_asm(); depth a multiple of 4 (the lowering's rule).
 */
#define NNRT_GR_CHUNK(s00, s01, s10, s11)                                                    \
    "ldrd " NNRT_GA_X0 ", " NNRT_GA_X1 ", [" NNRT_GA_C "], #8\n\t"                            \
    "ldrd " NNRT_GA_WE ", " NNRT_GA_WV ", [%[w]], #8\n\t"                                     \
    "ldrd " NNRT_GA_X2 ", " NNRT_GA_X3 ", [" NNRT_GA_C "], #8\n\t"                            \
    "smlad %[a11], " NNRT_GA_X2 ", " NNRT_GA_WE ", " s11 "\n\t"                               \
    "smlad %[a10], " NNRT_GA_X0 ", " NNRT_GA_WE ", " s10 "\n\t"                               \
    "smlad %[a10], " NNRT_GA_X1 ", " NNRT_GA_WV ", %[a10]\n\t"                                \
    "smlad %[a11], " NNRT_GA_X3 ", " NNRT_GA_WV ", %[a11]\n\t"                                \
    "sxtb16 " NNRT_GA_WE ", " NNRT_GA_WE "\n\t"                                               \
    "sxtb16 " NNRT_GA_WV ", " NNRT_GA_WV "\n\t"                                               \
    "smlad %[a01], " NNRT_GA_X2 ", " NNRT_GA_WE ", " s01 "\n\t"                               \
    "smlad %[a00], " NNRT_GA_X0 ", " NNRT_GA_WE ", " s00 "\n\t"                               \
    "smlad %[a00], " NNRT_GA_X1 ", " NNRT_GA_WV ", %[a00]\n\t"                                \
    "smlad %[a01], " NNRT_GA_X3 ", " NNRT_GA_WV ", %[a01]\n\t"
#define NNRT_GR_NEXT NNRT_GR_CHUNK("%[a00]", "%[a01]", "%[a10]", "%[a11]")

static NNRT_ALWAYS_INLINE void nnrt_gemm_pairs_rp_asm(const nnrt_gemm_s8_t *g,
                                                      const void *cols, int8_t *out0)
{
    NNRT_GA_REGS
    __asm__ volatile(
        NNRT_GA_PROLOGUE
        NNRT_GR_CHUNK("%[a00]", "%[a00]", "%[a10]", "%[a10]")
        NNRT_GA_LOOP(NNRT_GR_NEXT)
        "sub %[a10], %[a10], %[a00]\n\t"
        "sub %[a11], %[a11], %[a01]\n\t"
        "asr %[a10], %[a10], #8\n\t"
        "asr %[a11], %[a11], #8\n\t"
        NNRT_GA_EPILOGUE
        : [kc] "i"(g->k >> 2), [kb] "i"(16 * (g->k >> 2)), [oc] "i"(g->oc),
          [stage] "i"(g->stage), [lo8] "i"(g->act_min), [hi8] "i"(g->act_max),
          [last] "i"(NNRT_GEMM_RQ_LAST)
        : "cc", "memory");
}
#undef NNRT_GR_CHUNK
#undef NNRT_GR_NEXT
/*
 * The matrix core's pixel pairs for weights widened to int16 (the "conv-int16" layout,
 * nnrt_gemm_pair_body_w16() below) in blocks of 3 channels: per chunk of 4 depth
 * positions the two pixels' columns in 2 LDRD, then per channel of the block its words
 * E = [w0 w2], O = [w1 w3] in one LDRD and 4 SMLAD (each SMLAD 2 MACs of one channel):
 * 17 instructions per 24 MACs (the pair rows: 13 per 16, and 4 a pair to unmix; the
 * row-major loop 17 per 16). The six accumulators, 4 column words, 2 weight words and
 * the two pointers take 14 registers: all of them but sp and pc, r7 (a frame pointer in
 * some builds) saved and restored here and never named to GCC. Per block of 3 channels:
 *
 * - its 3 biases in one LDM (the records of a block: 3 biases, then each channel's
 *   multiplier, addend and rsh: nnopt.lowering.gemm_pairs.block_records()), the first
 *   chunk's SMLADs accumulating onto them;
 * - the depth loop (NNRT_G3_LOOP8: eight chunks a pass from depth 36, else four or two
 *   as NNRT_GA_LOOP, the columns' end read from the stack at each pass's compare);
 * - the weights pointer (r7) to its stack slot, the output-stage registers back (POP),
 *   the 6 outputs as nnrt_gemm_pairs_asm() (one LDM per channel's record, 6
 *   instructions an output before the clamps of a narrower range);
 * - the loop ends after the block whose third rsh has NNRT_GEMM_RQ_LAST set (the last
 *   whole block); a last block of oc % 3 channels follows, the same code for 2 or 1.
 *
 * Bit-exact with nnrt_gemm_pair1_rq(): the same int32 sums (each product exact, the
 * sums wrapping as SMLAD does) and the same output stage.
 */
#define NNRT_G3_C "%[o]"   /* cols pointer / output pointer */
#define NNRT_G3_X0 "%[q]"  /* column word / 2^30 (cols base on entry) */
#define NNRT_G3_X1 "%[r]"  /* column word / record pointer */
#define NNRT_G3_X2 "%[m]"  /* column word / multiplier */
#define NNRT_G3_X3 "%[ad]" /* column word / addend */
#define NNRT_G3_WE "%[rs]" /* weight word E / rsh (the filter on entry) */
#define NNRT_G3_WV "%[lo]" /* weight word O / low word of the sum */
/* r7: the weights pointer in the depth loop, the sum's high word in the output stage */
#define NNRT_G3_CH(a0, a1, s0, s1)                                                           \
    "ldrd " NNRT_G3_WE ", " NNRT_G3_WV ", [r7], #8\n\t"                                       \
    "smlad " a1 ", " NNRT_G3_X2 ", " NNRT_G3_WE ", " s1 "\n\t"                                \
    "smlad " a0 ", " NNRT_G3_X0 ", " NNRT_G3_WE ", " s0 "\n\t"                                \
    "smlad " a0 ", " NNRT_G3_X1 ", " NNRT_G3_WV ", " a0 "\n\t"                                \
    "smlad " a1 ", " NNRT_G3_X3 ", " NNRT_G3_WV ", " a1 "\n\t"
/* one chunk; s01, s11, s21: pixel 1's start values (the first chunk: the biases) */
#define NNRT_G3_CHUNK(s01, s11, s21)                                                         \
    "ldrd " NNRT_G3_X0 ", " NNRT_G3_X1 ", [" NNRT_G3_C "], #8\n\t"                            \
    "ldrd " NNRT_G3_X2 ", " NNRT_G3_X3 ", [" NNRT_G3_C "], #8\n\t"                            \
    NNRT_G3_CH("%[a00]", "%[a01]", "%[a00]", s01)                                             \
    NNRT_G3_CH("%[a10]", "%[a11]", "%[a10]", s11)                                             \
    NNRT_G3_CH("%[a20]", "%[a21]", "%[a20]", s21)
#define NNRT_G3_NEXT NNRT_G3_CHUNK("%[a01]", "%[a11]", "%[a21]")
/* the last block's chunks when it has 2 channels or 1 (oc % 3) */
#define NNRT_G2_CHUNK(s01, s11)                                                              \
    "ldrd " NNRT_G3_X0 ", " NNRT_G3_X1 ", [" NNRT_G3_C "], #8\n\t"                            \
    "ldrd " NNRT_G3_X2 ", " NNRT_G3_X3 ", [" NNRT_G3_C "], #8\n\t"                            \
    NNRT_G3_CH("%[a00]", "%[a01]", "%[a00]", s01)                                             \
    NNRT_G3_CH("%[a10]", "%[a11]", "%[a10]", s11)
#define NNRT_G2_NEXT NNRT_G2_CHUNK("%[a01]", "%[a11]")
#define NNRT_G1_CHUNK(s01)                                                                   \
    "ldrd " NNRT_G3_X0 ", " NNRT_G3_X1 ", [" NNRT_G3_C "], #8\n\t"                            \
    "ldrd " NNRT_G3_X2 ", " NNRT_G3_X3 ", [" NNRT_G3_C "], #8\n\t"                            \
    NNRT_G3_CH("%[a00]", "%[a01]", "%[a00]", s01)
#define NNRT_G1_NEXT NNRT_G1_CHUNK("%[a01]")
/* a block's depth loop: its weights pointer and columns from the stack, the output
 * stage's registers pushed */
#define NNRT_G3_ENTER                                                                         \
    "push {%[q], %[o], %[r]}\n\t"                                                            \
    "ldr r7, [sp, #20]\n\t"                                                                  \
    "ldr " NNRT_G3_C ", [sp, #12]\n\t"
/* the columns' end (stack) against the cols pointer */
#define NNRT_G3_END                                                                           \
    "ldr " NNRT_G3_X0 ", [sp, #16]\n\t"                                                       \
    "cmp " NNRT_G3_C ", " NNRT_G3_X0 "\n\t"                                                   \
    "bne 2b\n\t"
/* NNRT_GA_LOOP with the end from the stack: 3 instructions a pass, so four chunks a
 * pass where r = kc - 1 is 4 or at least 6 (as there) */
#define NNRT_G3_LOOP(next) NNRT_GA_LOOP_TO(next, NNRT_G3_END)
/* the whole blocks' depth loop: NNRT_G3_LOOP, but eight chunks a pass where r = kc - 1
 * is 8 or more (3 ceil(r / 8) + (r % 8 != 0) instructions of loop control: depth 144,
 * 28 -> 16 a block), entered where the remainder starts */
#define NNRT_G3_LOOP8(next)                                                                   \
    ".if %c[kc] >= 9\n\t"                                                                    \
    ".if ((%c[kc] - 1) & 7) == 7\n\t"                                                        \
    "b 3f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 6\n\t"                                                    \
    "b 4f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 5\n\t"                                                    \
    "b 5f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 4\n\t"                                                    \
    "b 6f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 3\n\t"                                                    \
    "b 7f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 2\n\t"                                                    \
    "b 8f\n\t"                                                                               \
    ".elseif ((%c[kc] - 1) & 7) == 1\n\t"                                                    \
    "b 9f\n\t"                                                                               \
    ".endif\n"                                                                                \
    "2:\n\t" next "3:\n\t" next "4:\n\t" next "5:\n\t" next                              \
    "6:\n\t" next "7:\n\t" next "8:\n\t" next "9:\n\t" next NNRT_G3_END                  \
    ".else\n\t" NNRT_G3_LOOP(next) ".endif\n\t"
/* one output: acc requantised by the record in m / ad / rs (r7 the high word) */
#define NNRT_G3_OUT(acc, store)                                                               \
    "add r7, %[ad], " acc ", asr #31\n\t"                                                     \
    "eor %[lo], %[q], r7, lsl #31\n\t"                                                        \
    "smlal %[lo], r7, " acc ", %[m]\n\t"                                                      \
    "asr r7, r7, %[rs]\n\t"                                                                   \
    "ssat r7, #8, r7\n\t"                                                                     \
    ".if %c[stage] == 1\n\t"                                                                  \
    ".if %c[lo8] > -128\n\t"                                                                  \
    "cmp r7, #%c[lo8]\n\t"                                                                    \
    "it lt\n\t"                                                                               \
    "movlt r7, #%c[lo8]\n\t"                                                                  \
    ".endif\n\t"                                                                              \
    ".if %c[hi8] < 127\n\t"                                                                   \
    "cmp r7, #%c[hi8]\n\t"                                                                    \
    "it gt\n\t"                                                                               \
    "movgt r7, #%c[hi8]\n\t"                                                                  \
    ".endif\n\t"                                                                              \
    ".endif\n\t" store "\n\t"
#define NNRT_G3_CHANNEL(acc0, acc1)                                                           \
    "ldm %[r]!, {%[m], %[ad], %[rs]}\n\t"                                                     \
    NNRT_G3_OUT(acc1, "strb r7, [%[o], #%c[oc]]")                                             \
    NNRT_G3_OUT(acc0, "strb r7, [%[o]], #1")

static NNRT_ALWAYS_INLINE void nnrt_gemm_w16_asm(const nnrt_gemm_s8_t *g, const void *cols,
                                                 int8_t *out0)
{
    /* pinned, each LDM's list in ascending order (the biases: a00 < a10 < a20; a
     * record: m < ad < rs) and none in r7 */
    register int32_t a00 __asm__("r0");
    register int32_t a10 __asm__("r1");
    register int32_t a20 __asm__("r2");
    register int32_t a01 __asm__("r3");
    register const void *q __asm__("r4") = cols;
    register int8_t *o __asm__("r5") = out0;
    register const int32_t *r __asm__("r6") = g->rq;
    register int32_t m __asm__("r8");
    register int32_t ad __asm__("r9");
    register const int8_t *rs __asm__("r10") = g->filter;
    register int32_t lo __asm__("r11");
    register int32_t a11 __asm__("r12");
    register int32_t a21 __asm__("lr");
    __asm__ volatile(
        "push {r7}\n\t"
        ".if %c[kb] < 4096\n\t"
        "addw r7, %[q], #%c[kb]\n\t"
        ".else\n\t"
        "movw r7, #%c[kb]\n\t"
        "add r7, r7, %[q]\n\t"
        ".endif\n\t"
        /* [sp]: the columns' start and end, the weights pointer, padding; r7 above */
        "strd %[q], r7, [sp, #-16]!\n\t"
        "str %[rs], [sp, #8]\n\t"
        "mov %[q], #0x40000000\n"
        "1:\n\t"
        "ldm %[r]!, {%[a00], %[a10], %[a20]}\n\t"
        NNRT_G3_ENTER
        NNRT_G3_CHUNK("%[a00]", "%[a10]", "%[a20]")
        NNRT_G3_LOOP8(NNRT_G3_NEXT)
        "str r7, [sp, #20]\n\t"
        "pop {%[q], %[o], %[r]}\n\t"
        NNRT_G3_CHANNEL("%[a00]", "%[a01]")
        NNRT_G3_CHANNEL("%[a10]", "%[a11]")
        NNRT_G3_CHANNEL("%[a20]", "%[a21]")
        "tst %[rs], #%c[last]\n\t"
        "beq 1b\n\t"
        /* the last block of oc % 3 channels (its records: biases, then each channel's) */
        ".if %c[rem] == 2\n\t"
        "ldrd %[a00], %[a10], [%[r]], #8\n\t"
        NNRT_G3_ENTER
        NNRT_G2_CHUNK("%[a00]", "%[a10]")
        NNRT_G3_LOOP(NNRT_G2_NEXT)
        "pop {%[q], %[o], %[r]}\n\t"
        NNRT_G3_CHANNEL("%[a00]", "%[a01]")
        NNRT_G3_CHANNEL("%[a10]", "%[a11]")
        ".elseif %c[rem] == 1\n\t"
        "ldr %[a00], [%[r]], #4\n\t"
        NNRT_G3_ENTER
        NNRT_G1_CHUNK("%[a00]")
        NNRT_G3_LOOP(NNRT_G1_NEXT)
        "pop {%[q], %[o], %[r]}\n\t"
        NNRT_G3_CHANNEL("%[a00]", "%[a01]")
        ".endif\n\t"
        "add sp, sp, #16\n\t"
        "pop {r7}\n\t"
        : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11),
          [a20] "=&r"(a20), [a21] "=&r"(a21), [o] "+r"(o), [r] "+r"(r), [q] "+r"(q),
          [m] "=&r"(m), [ad] "=&r"(ad), [rs] "+r"(rs), [lo] "=&r"(lo)
        : [kc] "i"(g->k >> 2), [kb] "i"(16 * (g->k >> 2)), [oc] "i"(g->oc),
          [rem] "i"(g->oc % 3), [stage] "i"(g->stage), [lo8] "i"(g->act_min),
          [hi8] "i"(g->act_max), [last] "i"(NNRT_GEMM_RQ_LAST)
        : "cc", "memory");
}
#undef NNRT_G3_C
#undef NNRT_G3_X0
#undef NNRT_G3_X1
#undef NNRT_G3_X2
#undef NNRT_G3_X3
#undef NNRT_G3_WE
#undef NNRT_G3_WV
#undef NNRT_G3_CH
#undef NNRT_G3_CHUNK
#undef NNRT_G3_NEXT
#undef NNRT_G2_CHUNK
#undef NNRT_G2_NEXT
#undef NNRT_G1_CHUNK
#undef NNRT_G1_NEXT
#undef NNRT_G3_ENTER
#undef NNRT_G3_END
#undef NNRT_G3_LOOP
#undef NNRT_G3_LOOP8
#undef NNRT_G3_OUT
#undef NNRT_G3_CHANNEL
#undef NNRT_GA_REGS
#undef NNRT_GA_PROLOGUE
#undef NNRT_GA_EPILOGUE
#undef NNRT_GA_C
#undef NNRT_GA_END
#undef NNRT_GA_X0
#undef NNRT_GA_X1
#undef NNRT_GA_X2
#undef NNRT_GA_X3
#undef NNRT_GA_WV
#undef NNRT_GA_WE
#undef NNRT_GA_LOADS
#undef NNRT_GA_ROW1
#undef NNRT_GA_MACS
#undef NNRT_GA_CHUNK
#undef NNRT_GA_FIRST
#undef NNRT_GA_TAIL
#undef NNRT_GA_TAIL3
#undef NNRT_GA_OUT
#undef NNRT_GA_CHANNEL
#undef NNRT_GA_LOOP
#undef NNRT_GA_LOOP_TO
#endif

/* RV32IM: blocks of 4 channels (after the output stage above, which it reuses) */
#include "rv32_gemm_pairs.h"

/*
 * The channel pairs of one pixel pair (nnrt_gemm_pair_fn: [oc0, n), or portable builds
 * the pair oc0, oc0 + n) through nnrt_gemm_pair1(), for the core g (x->g is not read: a
 * specialised caller passes its constant core here). DSP builds: one call runs all
 * pairs (no call, prologue and epilogue per pair); so do the packed builds (Thumb-2
 * without DSP: -0.5 to -1 % per anchor on the M33, measured). Portable builds: one pair
 * per call, as before: there the pair loop's own values spill in the portable depth
 * loop and the per-pair constant d is lost (Cortex-M3: +0.9-2 % per model, measured).
 */
static NNRT_ALWAYS_INLINE void nnrt_gemm_pair_body(const nnrt_gemm_s8_t *g,
                                                   const nnrt_gemm_pass_t *x, int32_t oc0,
                                                   int32_t n, int all_fast)
{
#if NNRT_MVE
    (void)all_fast;
    nnrt_mve_pairs(g, x->cols, x->out0, x->out1, oc0, n);
#elif NNRT_DSP || NNRT_GEMM_PACKED
    /* locals: the byte stores may alias *x, which would be reloaded after each */
    int8_t *const out0 = x->out0;
    int8_t *const out1 = x->out1;
    for (int32_t oc = oc0; oc < n; oc += 2) {
        nnrt_gemm_pair1(g, x->cols, out0, out1, oc, oc + 1 < n ? 1 : 0, all_fast);
    }
#elif NNRT_RV32
    nnrt_rv_gemm_pairs(g, x, oc0, n, all_fast, 0);
#else
    nnrt_gemm_pair1(g, x->cols, x->out0, x->out1, oc0, n, all_fast);
#endif
}

/*
 * nnrt_gemm_pair_body() for a core with channel records (g->rq: a specialised op whose
 * channels all have one, nnopt.lowering.specialize.gemm_records()). DSP builds with
 * constant depth (-O1 and above): the pairs of two stored pixels in assembly
 * (nnrt_gemm_pairs_asm()), an odd last channel or a lone pixel through
 * nnrt_gemm_pairs_rq_s8() (C, once in libnnrt); -O0 and packed builds: the same in C,
 * inline. Portable builds: one pair per call, as nnrt_gemm_pair_body().
 */
static NNRT_ALWAYS_INLINE void nnrt_gemm_pair_body_rq(const nnrt_gemm_s8_t *g,
                                                      const nnrt_gemm_pass_t *x, int32_t oc0,
                                                      int32_t n)
{
#if NNRT_MVE
    if ((oc0 & 1) != 0 && oc0 < n) { /* the records' vector loads start at a pair */
        nnrt_gemm_pair1_rq(g, x->cols, x->out0, x->out1, oc0, 0);
        ++oc0;
    }
    nnrt_mve_pairs(g, x->cols, x->out0, x->out1, oc0, n);
#elif NNRT_DSP || NNRT_GEMM_PACKED
    int8_t *const out0 = x->out0;
    int8_t *const out1 = x->out1;
    int32_t oc = oc0;
#if NNRT_DSP && defined(__OPTIMIZE__)
    if (NNRT_GEMM_ASM_OK(g)) {
        if (oc0 == 0 && n == g->oc && n >= 2 && out1 == out0 + g->oc) {
            nnrt_gemm_pairs_asm(g, x->cols, out0);
            oc = n & ~1;
        }
        if (oc < n) {
            nnrt_gemm_pairs_rq_s8(g, x, oc, n);
        }
        return;
    }
#endif
    for (; oc < n; oc += 2) {
        nnrt_gemm_pair1_rq(g, x->cols, out0, out1, oc, oc + 1 < n ? 1 : 0);
    }
#elif NNRT_RV32
    nnrt_rv_gemm_pairs(g, x, oc0, n, 0, 1);
#else
    nnrt_gemm_pair1_rq(g, x->cols, x->out0, x->out1, oc0, n);
#endif
}

/*
 * nnrt_gemm_pair_body_rq() for an op whose weights code generation wrote in the pair-row
 * layout (nnopt.lowering.gemm_pairs, for the cores whose data asks for it: the one
 * definition of the layout in Python). Every channel pair (2j, 2j + 1) holds its 2 * k
 * bytes at filter + 2j * k as k / 4 chunks of two words, E = [h_4c h_4c+2] and
 * O = [h_4c+1 h_4c+3] (little-endian int16 halfwords h_i = 256 * w_2j+1[i] + w_2j[i]);
 * an odd last channel stays a row-major row at its usual offset. The record's second
 * bias word is bias_2j + 256 * bias_2j+1 (wrapped to int32). k is a multiple of 4, at
 * most NNRT_GEMM_RP_MAX_K, and the lowering proved |bias_b + sum_i w_b[i] x_i| < 2^23
 * for every reachable input (x with the input offset), so that (mixed - a) >> 8, taken
 * modulo 2^32, is channel b's exact sum. DSP builds with constant depth (-O1 and
 * above): the pairs of two stored pixels in assembly (nnrt_gemm_pairs_rp_asm()); every
 * other case (a lone pixel, other builds of the same generated code) through
 * nnrt_gemm_pairs_rp_s8() in C, the same sums.
 */
/* 640: pretrainedResnet_quant's 3x3 convolutions of 64 channels (depth 576); deeper than
 * the scratch-free path's stack buffer only where the plan passes scratch to every call
 * (nnopt.lowering.conv: ConvLowering.scratch_always). */
#define NNRT_GEMM_RP_MAX_K 640

/* Channels [oc, n) of a pixel pair, oc even, weights in the pair-row layout (libnnrt,
 * internal/nnrt_gemm_s8.c). */
void nnrt_gemm_pairs_rp_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                           int32_t n);

static NNRT_ALWAYS_INLINE void nnrt_gemm_pair_body_rp(const nnrt_gemm_s8_t *g,
                                                      const nnrt_gemm_pass_t *x, int32_t oc0,
                                                      int32_t n)
{
#if NNRT_DSP || NNRT_GEMM_PACKED || NNRT_RV32
    int32_t oc = oc0;
#if NNRT_DSP && defined(__OPTIMIZE__)
    if (NNRT_GEMM_ASM_OK(g) && oc0 == 0 && n == g->oc && n >= 2
        && x->out1 == x->out0 + g->oc) {
        nnrt_gemm_pairs_rp_asm(g, x->cols, x->out0);
        oc = n & ~1;
    }
#endif
    if (oc < n) {
        nnrt_gemm_pairs_rp_s8(g, x, oc, n);
    }
#else
    /* portable builds: the pair oc0, oc0 + n (n = 1), or the odd last channel (n = 0) */
    nnrt_gemm_pairs_rp_s8(g, x, oc0, oc0 + n + 1);
#endif
}

/*
 * nnrt_gemm_pair_body_rq() for an op whose weights code generation widened to int16 (the
 * "conv-int16" layout, nnopt.lowering.gemm_pairs.int16_rows(): its one definition in
 * Python; only where the board's flash holds the doubled bytes). Per block of G channels
 * (blocks of 3 from channel 0, the last one of oc % 3 when that is not 0; block b at
 * filter + 6bk bytes), per chunk c of 4 depth positions, per channel of the block the
 * words E = [w_4c w_4c+2] and O = [w_4c+1 w_4c+3] of int16 halfwords: 4G int16 a chunk.
 * The records come in the same blocks (gemm_pairs.block_records(): the block's G biases,
 * then each channel's multiplier, addend and rsh; NNRT_GEMM_RQ_LAST on the last whole
 * block's third rsh). k a multiple of 4, at most NNRT_GEMM_RP_MAX_K (the C path of
 * builds without DSP unpacks two rows on its stack). DSP builds with constant depth
 * (-O1 and above): the blocks of two stored pixels in assembly (nnrt_gemm_w16_asm());
 * every other case (a lone pixel, other builds of the same generated code) through
 * nnrt_gemm_pairs_w16_s8() in C, the same sums.
 */
/* Channels [oc, n) of a pixel pair, weights and records in the int16 layout's blocks
 * (libnnrt, internal/nnrt_gemm_s8.c). */
void nnrt_gemm_pairs_w16_s8(const nnrt_gemm_s8_t *g, const nnrt_gemm_pass_t *x, int32_t oc,
                            int32_t n);

static NNRT_ALWAYS_INLINE void nnrt_gemm_pair_body_w16(const nnrt_gemm_s8_t *g,
                                                       const nnrt_gemm_pass_t *x, int32_t oc0,
                                                       int32_t n)
{
#if NNRT_DSP && defined(__OPTIMIZE__)
    /* every channel of a stored pixel pair (at least one whole block) */
    if (NNRT_GEMM_ASM_OK(g) && oc0 == 0 && n == g->oc && n >= 3
        && x->out1 == x->out0 + g->oc) {
        nnrt_gemm_w16_asm(g, x->cols, x->out0);
        return;
    }
#endif
#if NNRT_DSP || NNRT_GEMM_PACKED || NNRT_RV32
    nnrt_gemm_pairs_w16_s8(g, x, oc0, n);
#else
    /* portable builds: the pair oc0, oc0 + n (n = 1), or the odd last channel (n = 0) */
    nnrt_gemm_pairs_w16_s8(g, x, oc0, oc0 + n + 1);
#endif
}

/** All outputs of one pixel pair: nnrt_gemm_s8_2px() or a specialised instance. */
typedef void (*nnrt_gemm_2px_fn)(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0,
                                 int8_t *out1);

/* nnrt_gemm_s8_2px() (gemm.h) with the channel pairs run by pair(). */
static NNRT_ALWAYS_INLINE void nnrt_gemm_2px_body(const nnrt_gemm_s8_t *g, const void *cols,
                                                  int8_t *out0, int8_t *out1,
                                                  nnrt_gemm_pair_fn pair)
{
    /* pixel 1 missing: it repeats pixel 0 and writes the same bytes again */
    const nnrt_gemm_pass_t x = {g, cols, out0, out1 != NULL ? out1 : out0};
#if NNRT_DSP || NNRT_GEMM_PACKED || NNRT_RV32
    pair(&x, 0, g->oc);
#else
    int32_t oc = 0;
    for (; oc + 1 < g->oc; oc += 2) {
        pair(&x, oc, 1);
    }
    if (oc < g->oc) {
        pair(&x, oc, 0);
    }
#endif
}

#endif /* NNRT_KERNELS_INTERNAL_GEMM_BODY_H_ */
