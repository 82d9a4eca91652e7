/*
 * Internal to the nnrt kernels: the int8 fully connected layer over weights packed two
 * units to a word, which code generation writes for the ops it specialises on cores
 * without the DSP extension whose data asks for it (nnopt.lowering.fc: pack23_layout(),
 * the one definition of the layout in Python; generated code calls
 * nnrt_fc_pack23_body() from nnrt/kernels/spec.h). Same results as
 * nnrt_fully_connected_s8() on the row-major weights, byte for byte.
 *
 * Why: without SMLAD every multiply-add is a multiply instruction, and a batch-1 layer
 * uses each weight once, so the row-pair C form needs a load and an MLA per MAC (2.6
 * instructions a MAC with its loop on the AN521's Cortex-M33). Here the weights of
 * units a, b for one input are the int32 W = w_a + w_b * 2^23, and one SMLAL of W with
 * the input (offset added) accumulates w_a * x + w_b * x * 2^23 in a 64-bit sum
 * A + B * 2^23: two MACs per load and multiply. While |A| < 2^22 both parts are exact:
 * A is the low 23 bits sign-extended, B the rest shifted down; over 128 inputs
 * |A| <= 128 * 128 * 255 < 2^22, so the sums are split every NNRT_FC_PACK23_BLOCK inputs
 * into the int32 sums of TFLM. The cost: 4 bytes per two weights (twice the int8
 * tensor).
 *
 * Layout (int32 words): the units in pairs (2p, 2p + 1), an odd last unit paired with
 * zero weights; the pairs in groups of NNRT_FC_PACK23_GROUP (the last group may hold
 * fewer); per group, per input d, one word per pair of the group. The input row (offset
 * added) is copied once per row into an int16 buffer on the caller's stack
 * (NNRT_FC_PACK23_XBUF); the per-tensor weights offset, when not 0, adds
 * weights_offset * sum(x + input_offset) to every unit.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_PACK23_H_
#define NNRT_KERNELS_INTERNAL_FC_PACK23_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/fc.h"

#include "fc_body.h"

/* Inputs per split of the 64-bit sums (see above). */
#define NNRT_FC_PACK23_BLOCK 128
/* Unit pairs per group: 4 64-bit sums, an input and a weight word in registers. */
#define NNRT_FC_PACK23_GROUP 4

/* The input buffer of a specialised function: 2 * depth bytes. */
#define NNRT_FC_PACK23_XBUF(name, depth) int16_t name[(depth)]

/* The exact sums of a unit pair from its 64-bit sum s = A + B * 2^23 (|A| < 2^22). */
static inline void nnrt_fc_pack23_split(int64_t s, int32_t *a, int32_t *b)
{
    const int32_t lo = (int32_t)((uint32_t)s << 9) >> 9; /* A: the low 23 bits, signed */
    *a += lo;
    *b += (int32_t)((s - lo) >> 23);
}

/*
 * Sums of the np (<= NNRT_FC_PACK23_GROUP, a constant at each call) unit pairs of the
 * group whose words start at w, over the input row xs: acc[2j], acc[2j + 1] += the two
 * units' dot products.
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_pack23_group(const int16_t *xs, const int32_t *w,
                                                    int32_t depth, int32_t np,
                                                    int32_t acc[2 * NNRT_FC_PACK23_GROUP])
{
    for (int32_t d0 = 0; d0 < depth; d0 += NNRT_FC_PACK23_BLOCK) {
        const int32_t n = depth - d0 < NNRT_FC_PACK23_BLOCK ? depth - d0 : NNRT_FC_PACK23_BLOCK;
        const int16_t *x = xs + d0;
        const int16_t *x_end = x + n;
        int64_t s0 = 0;
        int64_t s1 = 0;
        int64_t s2 = 0;
        int64_t s3 = 0;
        for (; x != x_end; ++x, w += np) {
            const int32_t v = *x;
            s0 += (int64_t)w[0] * v; /* SMLAL */
            if (np > 1) {
                s1 += (int64_t)w[1] * v;
            }
            if (np > 2) {
                s2 += (int64_t)w[2] * v;
            }
            if (np > 3) {
                s3 += (int64_t)w[3] * v;
            }
        }
        nnrt_fc_pack23_split(s0, &acc[0], &acc[1]);
        if (np > 1) {
            nnrt_fc_pack23_split(s1, &acc[2], &acc[3]);
        }
        if (np > 2) {
            nnrt_fc_pack23_split(s2, &acc[4], &acc[5]);
        }
        if (np > 3) {
            nnrt_fc_pack23_split(s3, &acc[6], &acc[7]);
        }
    }
}

/* Units [o, o + 2 np) (fewer at the end of the layer) of one input row. */
static NNRT_ALWAYS_INLINE void nnrt_fc_pack23_units(const nnrt_fc_s8_params_t *params,
                                                    const int16_t *xs, const int32_t *w,
                                                    const int32_t *bias, int32_t base,
                                                    int8_t *output, int32_t o, int32_t np,
                                                    int all_fast)
{
    const int32_t units = params->output_depth;
    int32_t acc[2 * NNRT_FC_PACK23_GROUP];
    for (int32_t j = 0; j < 2 * NNRT_FC_PACK23_GROUP; ++j) {
        acc[j] = base + (bias != NULL && j < 2 * np && o + j < units ? bias[o + j] : 0);
    }
    nnrt_fc_pack23_group(xs, w, params->accum_depth, np, acc);
    const nnrt_fc_outs_t q = nnrt_fc_outs(params, o);
    for (int32_t j = 0; j < 2 * np && o + j < units; ++j) {
        output[o + j] = nnrt_fc_out(&q, j, acc[j], all_fast);
    }
}

/*
 * nnrt_fully_connected_s8() over weights in the packed layout (generated code only: its
 * arguments were checked at build time, the layout written by the lowering). xs:
 * NNRT_FC_PACK23_XBUF(xs, accum_depth). all_fast as nnrt_fc_body().
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_pack23_body(const nnrt_fc_s8_params_t *params,
                                                   const int8_t *input, const int32_t *weights,
                                                   const int32_t *bias, int8_t *output,
                                                   int all_fast, int16_t *xs)
{
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const int32_t pairs = (units + 1) / 2;
    const int32_t whole = pairs - pairs % NNRT_FC_PACK23_GROUP;
    const int32_t rest = pairs % NNRT_FC_PACK23_GROUP;
    for (int32_t b = 0; b < params->batches; ++b, input += depth, output += units) {
        int32_t sum = 0;
        for (int32_t d = 0; d < depth; ++d) {
            xs[d] = (int16_t)(input[d] + params->input_offset);
            sum += xs[d];
        }
        const int32_t base = params->weights_offset * sum;
        const int32_t *w = weights;
        for (int32_t p = 0; p < whole; p += NNRT_FC_PACK23_GROUP) {
            nnrt_fc_pack23_units(params, xs, w, bias, base, output, 2 * p,
                                 NNRT_FC_PACK23_GROUP, all_fast);
            w += NNRT_FC_PACK23_GROUP * depth;
        }
        /* the last group: 1-3 pairs (each count its own instance) */
        if (rest == 1) {
            nnrt_fc_pack23_units(params, xs, w, bias, base, output, 2 * whole, 1, all_fast);
        } else if (rest == 2) {
            nnrt_fc_pack23_units(params, xs, w, bias, base, output, 2 * whole, 2, all_fast);
        } else if (rest == 3) {
            nnrt_fc_pack23_units(params, xs, w, bias, base, output, 2 * whole, 3, all_fast);
        }
    }
}

#endif /* NNRT_KERNELS_INTERNAL_FC_PACK23_H_ */
