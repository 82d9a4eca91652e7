/*
 * Internal to the nnrt kernels: the int8 fully connected layer over its weights widened
 * to int16 at build time, which code generation writes for the ops it specialises on
 * the DSP cores whose data asks for it and whose flash holds the wider weights
 * (nnopt.lowering.fc: int16_layout(), the one definition of the layout in Python;
 * generated code calls nnrt_fc_int16_body() from nnrt/kernels/spec.h). Same results as
 * nnrt_fully_connected_s8() on the row-major weights, byte for byte.
 *
 * Why: the row-pair layout (fc_pairs.h) keeps the int8 bytes and spends 3 instructions
 * per 4 MACs on SMLAD, SXTB16, SMLAD (the second sum unmixes the first); with the
 * weights already sign-extended every SMLAD is 2 MACs of one unit, and the words of
 * four units for the same inputs are read with one LDM. Per chunk of 4 inputs x 4 units:
 * one LDRD of the inputs, two LDM of 4 weight words, 8 SMLAD: 11 instructions per 16 MACs
 * (row pairs: 14), eight chunks per loop iteration, no unmixing, no restart of the
 * sums every 256 inputs. The cost: two bytes per weight (twice the int8 tensor), which
 * is why the lowering takes it only where the board's flash holds them
 * (nnopt.lowering.fc.fit_flash()).
 *
 * Layout (int16, 2 * depth * units bytes):
 * - per whole group of 4 units u0..u3, per chunk of 4 inputs d .. d + 3 (d = 4 c,
 *   c < depth / 4), 8 words: word r (r < 4): unit u_r at inputs d, d + 2; word 4 + r:
 *   unit u_r at inputs d + 1, d + 3 (halfwords in that order: the input buffer's words
 *   [x_d x_{d+2}] [x_{d+1} x_{d+3}] of fc_pairs.h);
 * - then the depth % 4 last inputs of the group's 4 units, row-major ([4][depth % 4]);
 * - the units % 4 = nr last units after the groups in the same order with nr units in
 *   place of 4 (per chunk 2 nr words, then [nr][depth % 4]).
 *
 * The input (offset added, int16) is written once per input row into the caller's
 * buffer (NNRT_FC_INT16_XBUF, 2 * depth bytes of its stack) by nnrt_fc_pairs_input();
 * the per-tensor weights offset, when not 0, adds weights_offset * sum(x + input_offset)
 * to every unit. The sums are the int32 sums of TFLM (SMLAD wraps as TFLM's int32
 * additions do on these cores). DSP cores at -O1 and up: the assembly; elsewhere
 * (other cores compiling generated code planned for a DSP core, -O0) the same sums in C.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_INT16_H_
#define NNRT_KERNELS_INTERNAL_FC_INT16_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/fc.h"

#include "fc_body.h"
#include "fc_pairs.h"
#include "simd.h"

/* The input buffer of a specialised function: 2 * depth bytes, word aligned (LDRD). */
#define NNRT_FC_INT16_XBUF(name, depth) NNRT_FC_PAIRS_XBUF(name, depth)

/*
 * *s_r += sum over the n chunks (4 inputs each) of the group's weights at *wp times the
 * input buffer at *xp, for the 4 units u_r; *xp and *wp advance past the chunks.
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_int16_chunks(const int16_t **xp, const int16_t **wp,
                                                    int32_t n, int32_t *s0, int32_t *s1,
                                                    int32_t *s2, int32_t *s3)
{
    const int16_t *x = *xp;
    const int16_t *w = *wp;
    const int16_t *x_end = x + 4 * n;
    int32_t a0 = *s0;
    int32_t a1 = *s1;
    int32_t a2 = *s2;
    int32_t a3 = *s3;
#if NNRT_DSP && defined(__OPTIMIZE__) && defined(__GNUC__)
    /* One chunk: the two input words, per input word the 4 units' weight words (LDM: in
     * ascending register order, so the four are pinned to r2, r3, r12, lr) and 4 SMLAD. */
    register uint32_t w0 __asm__("r2");
    register uint32_t w1 __asm__("r3");
    register uint32_t w2 __asm__("r12");
    register uint32_t w3 __asm__("lr");
    uint32_t xe;
    uint32_t xo;
#define NNRT_FC_INT16_CHUNK                                                                  \
    "ldrd %[xe], %[xo], [%[x]], #8\n\t"                                                      \
    "ldm %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                            \
    "smlad %[a0], %[w0], %[xe], %[a0]\n\t"                                                   \
    "smlad %[a1], %[w1], %[xe], %[a1]\n\t"                                                   \
    "smlad %[a2], %[w2], %[xe], %[a2]\n\t"                                                   \
    "smlad %[a3], %[w3], %[xe], %[a3]\n\t"                                                   \
    "ldm %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"                                            \
    "smlad %[a0], %[w0], %[xo], %[a0]\n\t"                                                   \
    "smlad %[a1], %[w1], %[xo], %[a1]\n\t"                                                   \
    "smlad %[a2], %[w2], %[xo], %[a2]\n\t"                                                   \
    "smlad %[a3], %[w3], %[xo], %[a3]\n\t"
#define NNRT_FC_INT16_OPERANDS                                                               \
    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w), \
      [xe] "=&r"(xe), [xo] "=&r"(xo), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),       \
      [w3] "=&r"(w3)                                                                        \
    :                                                                                        \
    : "memory"
    /* eight chunks per loop iteration (four: 216,360 instead of 210,280 instructions on
     * ad01_int8, 1.8 KB less code over its ten functions) */
    if ((n & 1) != 0) {
        __asm__(NNRT_FC_INT16_CHUNK NNRT_FC_INT16_OPERANDS);
    }
    NNRT_FC_ASM_CHUNKS(n >> 1, x, x_end, NNRT_FC_INT16_CHUNK NNRT_FC_INT16_CHUNK,
                       NNRT_FC_INT16_OPERANDS);
#undef NNRT_FC_INT16_CHUNK
#undef NNRT_FC_INT16_OPERANDS
#else
    for (; x != x_end; x += 4, w += 16) {
        a0 += w[0] * x[0] + w[1] * x[1] + w[8] * x[2] + w[9] * x[3];
        a1 += w[2] * x[0] + w[3] * x[1] + w[10] * x[2] + w[11] * x[3];
        a2 += w[4] * x[0] + w[5] * x[1] + w[12] * x[2] + w[13] * x[3];
        a3 += w[6] * x[0] + w[7] * x[1] + w[14] * x[2] + w[15] * x[3];
    }
#endif
    *xp = x;
    *wp = w;
    *s0 = a0;
    *s1 = a1;
    *s2 = a2;
    *s3 = a3;
}

/*
 * s[r] += the dot products of the nr (1-3, a constant at each call) last units, whose
 * weights start at w: per chunk 2 nr words, then the depth % 4 last inputs (C: a
 * word-wise SMLAD on DSP cores, about 1.2 instructions per MAC).
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_int16_rest(const int16_t *xs, const int16_t *w,
                                                  int32_t depth, int32_t nr, int32_t s[3])
{
    const int32_t tail = depth & 3;
    const int16_t *x = xs;
    const int16_t *x_end = xs + (depth & ~3);
    int32_t a0 = s[0];
    int32_t a1 = s[1];
    int32_t a2 = s[2];
    for (; x != x_end; x += 4, w += 4 * nr) {
#if NNRT_DSP
        const uint32_t xe = nnrt_ld32(x);
        const uint32_t xo = nnrt_ld32(x + 2);
        a0 = __smlad(nnrt_ld32(w + 2 * nr), xo, __smlad(nnrt_ld32(w), xe, a0));
        if (nr > 1) {
            a1 = __smlad(nnrt_ld32(w + 2 * nr + 2), xo, __smlad(nnrt_ld32(w + 2), xe, a1));
        }
        if (nr > 2) {
            a2 = __smlad(nnrt_ld32(w + 2 * nr + 4), xo, __smlad(nnrt_ld32(w + 4), xe, a2));
        }
#else
        a0 += w[0] * x[0] + w[1] * x[1] + w[2 * nr] * x[2] + w[2 * nr + 1] * x[3];
        if (nr > 1) {
            a1 += w[2] * x[0] + w[3] * x[1] + w[2 * nr + 2] * x[2] + w[2 * nr + 3] * x[3];
        }
        if (nr > 2) {
            a2 += w[4] * x[0] + w[5] * x[1] + w[2 * nr + 4] * x[2] + w[2 * nr + 5] * x[3];
        }
#endif
    }
    for (int32_t i = 0; i < tail; ++i) {
        a0 += w[i] * x[i];
        if (nr > 1) {
            a1 += w[tail + i] * x[i];
        }
        if (nr > 2) {
            a2 += w[2 * tail + i] * x[i];
        }
    }
    s[0] = a0;
    s[1] = a1;
    s[2] = a2;
}

/* The nr last units from o of one input row: start values, sums, output stage. */
static NNRT_ALWAYS_INLINE void nnrt_fc_int16_last(const nnrt_fc_s8_params_t *params,
                                                  const int16_t *xs, const int16_t *w,
                                                  const int32_t *bias, int32_t base,
                                                  int8_t *output, int32_t o, int32_t nr,
                                                  int all_fast)
{
    int32_t s[3];
    for (int32_t r = 0; r < 3; ++r) {
        s[r] = base + (bias != NULL && r < nr ? bias[o + r] : 0);
    }
    nnrt_fc_int16_rest(xs, w, params->accum_depth, nr, s);
    const nnrt_fc_outs_t q = nnrt_fc_outs(params, o);
    for (int32_t r = 0; r < nr; ++r) {
        output[o + r] = nnrt_fc_out(&q, r, s[r], all_fast);
    }
}

/*
 * nnrt_fully_connected_s8() over weights in the int16 layout (generated code only: its
 * arguments were checked at build time, the layout written by the lowering). xs:
 * NNRT_FC_INT16_XBUF(xs, accum_depth). all_fast as nnrt_fc_body().
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_int16_body(const nnrt_fc_s8_params_t *params,
                                                  const int8_t *input, const int16_t *weights,
                                                  const int32_t *bias, int8_t *output,
                                                  int all_fast, int16_t *xs)
{
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const int32_t w_off = params->weights_offset;
    const int32_t whole = units & ~3;
    const int32_t chunks = depth >> 2;
    const int32_t tail = depth & 3;
    for (int32_t b = 0; b < params->batches; ++b, input += depth, output += units) {
        const int32_t base =
            w_off * nnrt_fc_pairs_input(input, depth, params->input_offset, xs, w_off != 0);
        const int16_t *w = weights;
        for (int32_t o = 0; o < whole; o += 4) {
            int32_t s0 = (bias != NULL ? bias[o] : 0) + base;
            int32_t s1 = (bias != NULL ? bias[o + 1] : 0) + base;
            int32_t s2 = (bias != NULL ? bias[o + 2] : 0) + base;
            int32_t s3 = (bias != NULL ? bias[o + 3] : 0) + base;
            const int16_t *x = xs;
            nnrt_fc_int16_chunks(&x, &w, chunks, &s0, &s1, &s2, &s3);
            for (int32_t i = 0; i < tail; ++i) {
                const int32_t xv = x[i];
                s0 += w[i] * xv;
                s1 += w[tail + i] * xv;
                s2 += w[2 * tail + i] * xv;
                s3 += w[3 * tail + i] * xv;
            }
            w += 4 * tail;
            const nnrt_fc_outs_t q = nnrt_fc_outs(params, o);
            output[o] = nnrt_fc_out(&q, 0, s0, all_fast);
            output[o + 1] = nnrt_fc_out(&q, 1, s1, all_fast);
            output[o + 2] = nnrt_fc_out(&q, 2, s2, all_fast);
            output[o + 3] = nnrt_fc_out(&q, 3, s3, all_fast);
        }
        /* the units % 4 last units (each count its own instance) */
        if (units - whole == 1) {
            nnrt_fc_int16_last(params, xs, w, bias, base, output, whole, 1, all_fast);
        } else if (units - whole == 2) {
            nnrt_fc_int16_last(params, xs, w, bias, base, output, whole, 2, all_fast);
        } else if (units - whole == 3) {
            nnrt_fc_int16_last(params, xs, w, bias, base, output, whole, 3, all_fast);
        }
    }
}

#endif /* NNRT_KERNELS_INTERNAL_FC_INT16_H_ */
