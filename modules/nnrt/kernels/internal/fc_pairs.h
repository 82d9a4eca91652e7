/*
 * Internal to the nnrt kernels: the int8 fully connected layer over weights stored in
 * the row-pair layout, which code generation writes for the ops it specialises
 * (nnopt.lowering.fc: pair_layout(), the one definition of the layout in Python;
 * generated code calls nnrt_fc_pairs_body() from nnrt/kernels/spec.h). Same results as
 * nnrt_fully_connected_s8() on the row-major weights, byte for byte.
 *
 * Why a layout of its own: with row-major int8 weights every 2 MACs cost an SXTB16 and
 * an SMLAD (1 instruction per MAC, plus the loads). Here one halfword carries the
 * weights of two units for the same input, stored as the int16 value
 * h = 256 * w_b + w_a, so that one SMLAD of the raw weight word with the inputs
 * accumulates 256 * (unit b's sum) + (unit a's sum) over two inputs, and an SXTB16 of
 * the same word and a second SMLAD give unit a's sum alone: 3 instructions per 4 MACs.
 * Unit b's sum is the difference divided by 256. The mixed sum is restarted every
 * NNRT_FC_PAIRS_BLOCK inputs, so that it never leaves int32 (below), and every sum is
 * the exact integer TFLM accumulates.
 *
 * Layout of the weights (4 * depth bytes per whole group of 4 units u0..u3, the same
 * size and the same offsets of the groups as the row-major [units][depth] array):
 * - per chunk of 4 inputs d .. d + 3 (d = 4 c, c < depth / 4), 16 bytes, 4 words:
 *   word 0: units u0, u1 at inputs d, d + 2; word 1: u2, u3 at d, d + 2;
 *   word 2: u0, u1 at d + 1, d + 3;          word 3: u2, u3 at d + 1, d + 3;
 *   the word of units (a, b) at inputs (i, j) holds the bytes
 *   [w_a[i], h_b[i], w_a[j], h_b[j]] with h_b = w_b - (w_a < 0), so that each
 *   little-endian halfword read as int16 is 256 * w_b + w_a (the lowering refuses the
 *   layout when w_b = -128 meets a negative w_a: not an int16);
 * - then the depth % 4 last inputs of the 4 units, row-major ([4][depth % 4]).
 * The units % 4 last units stay row-major after the groups.
 *
 * The input (with its offset added, as int16) is written once per input row into a
 * buffer the caller gives (NNRT_FC_PAIRS_XBUF: 2 * depth bytes of its stack), shared by
 * all units: per chunk [x_d x_{d+2}] [x_{d+1} x_{d+3}] (what SXTAB16 makes of an input
 * word), the depth % 4 last inputs in order. The per-tensor weights offset, when not 0,
 * adds weights_offset * sum(x + input_offset) to every unit (one sum per input row).
 *
 * DSP cores (-O1 and up): per chunk of 4 inputs x 4 units one LDRD of the inputs, one
 * LDM of the 4 weight words, 4 SXTB16, 8 SMLAD: 14 instructions per 16 MACs. Elsewhere
 * (Cortex-M3, the host, -O0) the same sums in C.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_PAIRS_H_
#define NNRT_KERNELS_INTERNAL_FC_PAIRS_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/fc.h"

#include "fc_body.h"
#include "simd.h"

/* Inputs per block: over 256 inputs the mixed sum could pass 2^31 (see above). */
#define NNRT_FC_PAIRS_BLOCK 256
/* Chunks of 4 inputs per block. */
#define NNRT_FC_PAIRS_BLOCK_CHUNKS (NNRT_FC_PAIRS_BLOCK / 4)

/* The input buffer of a specialised function: 2 * depth bytes, word aligned (LDRD). */
#define NNRT_FC_PAIRS_XBUF(name, depth) int16_t name[(depth)] __attribute__((aligned(8)))

/* n chunks of the assembly string CHUNK (its operands OPERANDS: it advances x), one,
 * then two, then four per loop iteration until x reaches x_end (the FC loops of the DSP
 * cores: here and internal/fc_int16.h). */
#define NNRT_FC_ASM_CHUNKS(n, x, x_end, CHUNK, OPERANDS)                                     \
    do {                                                                                     \
        if (((n) & 1) != 0) {                                                                \
            __asm__(CHUNK OPERANDS);                                                         \
        }                                                                                    \
        if (((n) & 2) != 0) {                                                                \
            __asm__(CHUNK CHUNK OPERANDS);                                                   \
        }                                                                                    \
        while ((x) != (x_end)) {                                                             \
            __asm__(CHUNK CHUNK CHUNK CHUNK OPERANDS);                                       \
        }                                                                                    \
    } while (0)

/* The int16 halfword at p (little-endian, as every target of nnrt: one LDRSH). */
static inline int32_t nnrt_fc_pairs_h(const int8_t *p)
{
    int16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* One weight word of the C form: the mixed sum *m and the exact sum *a of a unit pair
 * over inputs xi, xj (one multiply-accumulate each, signed, so that GCC keeps the
 * chains: one MLA per product on Cortex-M3). */
static inline void nnrt_fc_pairs_word(const int8_t *v, int32_t xi, int32_t xj, int32_t *m,
                                      int32_t *a)
{
    *m += nnrt_fc_pairs_h(v) * xi;
    *m += nnrt_fc_pairs_h(v + 2) * xj;
    *a += v[0] * xi;
    *a += v[2] * xj;
}

/*
 * xs[] = the input row with input_offset added, in the chunk order (see above); returns
 * sum(x + input_offset) when `sum` is set (the weights offset needs it), else 0.
 */
static NNRT_ALWAYS_INLINE int32_t nnrt_fc_pairs_input(const int8_t *x, int32_t depth,
                                                      int32_t in_off, int16_t *xs, int sum)
{
    const int32_t d4 = depth & ~3;
    int32_t s = 0;
    int32_t d = 0;
#if NNRT_DSP
    const uint32_t off2 = nnrt_pair16(in_off);
    uint32_t *out = (uint32_t *)(void *)xs;
    for (; d < d4; d += 4, out += 2) {
        const uint32_t v = nnrt_ld32(x + d);
        out[0] = __sxtab16(off2, v);
        out[1] = nnrt_sxtab16_ror8(off2, v);
    }
    if (sum) {
        for (int32_t i = 0; i < d4; ++i) {
            s += xs[i];
        }
    }
#else
    for (; d < d4; d += 4) {
        xs[d] = (int16_t)(x[d] + in_off);
        xs[d + 1] = (int16_t)(x[d + 2] + in_off);
        xs[d + 2] = (int16_t)(x[d + 1] + in_off);
        xs[d + 3] = (int16_t)(x[d + 3] + in_off);
        if (sum) {
            s += xs[d] + xs[d + 1] + xs[d + 2] + xs[d + 3];
        }
    }
#endif
    for (; d < depth; ++d) {
        xs[d] = (int16_t)(x[d] + in_off);
        s += xs[d];
    }
    return sum ? s : 0;
}

/*
 * One block of n chunks (n <= NNRT_FC_PAIRS_BLOCK_CHUNKS) of one group: s0, s2 (units
 * u0, u2) exact, m01 and m23 the mixed sums (256 * u1 + u0, 256 * u3 + u2), which the
 * caller starts at 0: over at most 256 inputs they stay within int32 (each halfword
 * times an input at most 32896 * 255 in magnitude, 256 of them 2,147,450,880 < 2^31).
 * *xp and *wp advance past the block.
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_pairs_block(const int16_t **xp, const int8_t **wp,
                                                   int32_t n, int32_t *s0, int32_t *m01,
                                                   int32_t *s2, int32_t *m23)
{
    const int16_t *x = *xp;
    const int8_t *w = *wp;
    const int16_t *x_end = x + 4 * n;
    int32_t a0 = *s0;
    int32_t m0 = *m01;
    int32_t a2 = *s2;
    int32_t m2 = *m23;
#if NNRT_DSP && defined(__OPTIMIZE__) && defined(__GNUC__)
    /* One chunk: the two input words, the four weight words (LDM: in ascending register
     * order, so the four are pinned to r2, r3, r12, lr), per word SMLAD of the raw
     * word (mixed sum), SXTB16 in place, SMLAD (exact sum). */
    register uint32_t w0 __asm__("r2");
    register uint32_t w1 __asm__("r3");
    register uint32_t w2 __asm__("r12");
    register uint32_t w3 __asm__("lr");
    uint32_t xe;
    uint32_t xo;
#define NNRT_FC_PAIRS_CHUNK                                                                  \
    "ldrd %[xe], %[xo], [%[x]], #8\n\t"                                                      \
    "ldm %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                            \
    "smlad %[m0], %[w0], %[xe], %[m0]\n\t"                                                   \
    "sxtb16 %[w0], %[w0]\n\t"                                                                \
    "smlad %[a0], %[w0], %[xe], %[a0]\n\t"                                                   \
    "smlad %[m2], %[w1], %[xe], %[m2]\n\t"                                                   \
    "sxtb16 %[w1], %[w1]\n\t"                                                                \
    "smlad %[a2], %[w1], %[xe], %[a2]\n\t"                                                   \
    "smlad %[m0], %[w2], %[xo], %[m0]\n\t"                                                   \
    "sxtb16 %[w2], %[w2]\n\t"                                                                \
    "smlad %[a0], %[w2], %[xo], %[a0]\n\t"                                                   \
    "smlad %[m2], %[w3], %[xo], %[m2]\n\t"                                                   \
    "sxtb16 %[w3], %[w3]\n\t"                                                                \
    "smlad %[a2], %[w3], %[xo], %[a2]\n\t"
#define NNRT_FC_PAIRS_OPERANDS                                                               \
    : [a0] "+r"(a0), [m0] "+r"(m0), [a2] "+r"(a2), [m2] "+r"(m2), [x] "+r"(x), [w] "+r"(w), \
      [xe] "=&r"(xe), [xo] "=&r"(xo), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),       \
      [w3] "=&r"(w3)                                                                        \
    :                                                                                        \
    : "memory"
    NNRT_FC_ASM_CHUNKS(n, x, x_end, NNRT_FC_PAIRS_CHUNK, NNRT_FC_PAIRS_OPERANDS);
#undef NNRT_FC_PAIRS_CHUNK
#undef NNRT_FC_PAIRS_OPERANDS
#else
    /* The same sums: the halfword h = 256 * w_b + w_a times the input (mixed sum), the
     * low byte w_a times the input (exact sum). */
    for (; x != x_end; x += 4, w += 16) {
        nnrt_fc_pairs_word(w, x[0], x[1], &m0, &a0);       /* x_d, x_{d+2} */
        nnrt_fc_pairs_word(w + 4, x[0], x[1], &m2, &a2);
        nnrt_fc_pairs_word(w + 8, x[2], x[3], &m0, &a0);   /* x_{d+1}, x_{d+3} */
        nnrt_fc_pairs_word(w + 12, x[2], x[3], &m2, &a2);
    }
#endif
    *xp = x;
    *wp = w;
    *s0 = a0;
    *m01 = m0;
    *s2 = a2;
    *m23 = m2;
}

/*
 * *s_r += sum_d w_{u_r}[d] * xs[d] for the 4 units u_r of the group whose block starts
 * at gw (4 * depth bytes, word aligned on DSP cores): the int32 sums of TFLM. (Four
 * scalars, not an array: GCC keeps them in registers.)
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_pairs4(const int16_t *xs, const int8_t *gw,
                                              int32_t depth, int32_t *s0, int32_t *s1,
                                              int32_t *s2, int32_t *s3)
{
    const int32_t chunks = depth >> 2;
    const int32_t tail = depth & 3;
    const int16_t *x = xs;
    const int8_t *w = gw;
    for (int32_t c = 0; c < chunks; c += NNRT_FC_PAIRS_BLOCK_CHUNKS) {
        const int32_t n = chunks - c < NNRT_FC_PAIRS_BLOCK_CHUNKS ? chunks - c
                                                                  : NNRT_FC_PAIRS_BLOCK_CHUNKS;
        const int32_t s0_start = *s0;
        const int32_t s2_start = *s2;
        int32_t m01 = 0;
        int32_t m23 = 0;
        nnrt_fc_pairs_block(&x, &w, n, s0, &m01, s2, &m23);
        /* mixed sum minus u0's: 256 * (u1's sum over the block), an exact shift */
        *s1 += (m01 - (*s0 - s0_start)) >> 8;
        *s3 += (m23 - (*s2 - s2_start)) >> 8;
    }
    for (int32_t i = 0; i < tail; ++i) {
        const int32_t xv = x[i];
        *s0 += w[i] * xv;
        *s1 += w[tail + i] * xv;
        *s2 += w[2 * tail + i] * xv;
        *s3 += w[3 * tail + i] * xv;
    }
}

/*
 * nnrt_fully_connected_s8() over weights in the row-pair layout (generated code only:
 * its arguments were checked at build time, the layout written by the lowering). xs:
 * NNRT_FC_PAIRS_XBUF(xs, accum_depth). all_fast as nnrt_fc_body().
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_pairs_body(const nnrt_fc_s8_params_t *params,
                                                  const int8_t *input, const int8_t *weights,
                                                  const int32_t *bias, int8_t *output,
                                                  int all_fast, int16_t *xs)
{
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const int32_t w_off = params->weights_offset;
    const int32_t whole = units & ~3;
    for (int32_t b = 0; b < params->batches; ++b, input += depth, output += units) {
        const int32_t base =
            w_off * nnrt_fc_pairs_input(input, depth, params->input_offset, xs, w_off != 0);
        const int8_t *gw = weights;
        for (int32_t o = 0; o < whole; o += 4, gw += 4 * depth) {
            int32_t s0 = (bias != NULL ? bias[o] : 0) + base;
            int32_t s1 = (bias != NULL ? bias[o + 1] : 0) + base;
            int32_t s2 = (bias != NULL ? bias[o + 2] : 0) + base;
            int32_t s3 = (bias != NULL ? bias[o + 3] : 0) + base;
            nnrt_fc_pairs4(xs, gw, depth, &s0, &s1, &s2, &s3);
            const nnrt_fc_outs_t q = nnrt_fc_outs(params, o);
            output[o] = nnrt_fc_out(&q, 0, s0, all_fast);
            output[o + 1] = nnrt_fc_out(&q, 1, s1, all_fast);
            output[o + 2] = nnrt_fc_out(&q, 2, s2, all_fast);
            output[o + 3] = nnrt_fc_out(&q, 3, s3, all_fast);
        }
        if (whole < units) {
            nnrt_fc_units(params, input, weights, bias, output, whole, units - whole,
                          all_fast);
        }
    }
}

#endif /* NNRT_KERNELS_INTERNAL_FC_PAIRS_H_ */
