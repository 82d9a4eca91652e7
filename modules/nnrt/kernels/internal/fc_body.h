/*
 * Internal to the nnrt kernels: the body of nnrt_fully_connected_s8() (fc.h) as an
 * inline function, the one source of the generic kernel (run-time parameters) and of
 * the specialised functions code generation emits (nnrt/kernels/spec.h: the same body
 * with the op's `static const` parameters). Three units share each input word
 * (nnrt_dot3_s8(), internal/dot.h); the output stage in the fast requantisation
 * form of internal/requant.h, the reference for shifts outside it.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_BODY_H_
#define NNRT_KERNELS_INTERNAL_FC_BODY_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/fc.h"

#include "dot.h"
#include "mve_dot.h"
#include "requant.h"
#include "rv32_fc.h"
#include "simd.h"

/* 1 when v is known at build time: the specialised functions of nnrt/kernels/spec.h
 * (their parameters are `static const`), 0 in the generic kernel and at -O0. */
#if defined(__OPTIMIZE__) && defined(__GNUC__)
#define NNRT_FC_BUILD_CONST(v) __builtin_constant_p(v)
#else
#define NNRT_FC_BUILD_CONST(v) 0
#endif

#if NNRT_DSP && defined(__OPTIMIZE__) && defined(__GNUC__)
/* 1 when nnrt_fc_dot4() applies: the depth is a build-time constant and rows 1-3 are
 * in reach of LDR's 12-bit immediate offset. The generic kernel (run-time depth)
 * takes nnrt_dot3_s8(). */
#define NNRT_FC_DOT4(depth) (NNRT_FC_BUILD_CONST(depth) && (depth) >= 4 && 3 * (depth) <= 4095)

/*
 * acc[r] += sum_{d < depth} w[r * depth + d] * (x[d] + in_off) for r < 4, depth a
 * build-time constant. One weight pointer serves the four rows (the others at the
 * immediate offsets depth, 2 depth, 3 depth), which leaves the registers for a fourth
 * row: per chunk of 4 inputs the input word turned by SXTAB16 into [x0 x2] [x1 x3]
 * once, per row one weight word split by SXTB16 and 2 SMLAD: 23 instructions per 16
 * MACs, the compare and branch once per two chunks (48 per 32 MACs; nnrt_dot3_s8()
 * takes 38 per 24).
 */
static NNRT_ALWAYS_INLINE void nnrt_fc_dot4(const int8_t *x, const int8_t *w, int32_t depth,
                                            int32_t in_off, int32_t acc[4])
{
    const uint32_t off2 = nnrt_pair16(in_off);
    const int8_t *x_end = x + depth;
    int32_t a0 = acc[0];
    int32_t a1 = acc[1];
    int32_t a2 = acc[2];
    int32_t a3 = acc[3];
    uint32_t xe;
    uint32_t xo;
    uint32_t wv;
    uint32_t wt;
    /* the depth % 4 leading inputs first */
    for (const int8_t *x_head = x + (depth & 3); x != x_head; ++x, ++w) {
        const int32_t xv = (int32_t)*x + in_off;
        a0 += w[0] * xv;
        a1 += w[depth] * xv;
        a2 += w[2 * depth] * xv;
        a3 += w[3 * depth] * xv;
    }
#define NNRT_FC_ROW4(wload, acc)                                                             \
    wload "sxtb16 %[wt], %[wv]\n\t"                                                          \
          "sxtb16 %[wv], %[wv], ror #8\n\t"                                                  \
          "smlad %[" acc "], %[xe], %[wt], %[" acc "]\n\t"                                   \
          "smlad %[" acc "], %[xo], %[wv], %[" acc "]\n\t"
#define NNRT_FC_CHUNK4                                                                       \
    "ldr %[xo], [%[x]], #4\n\t"                                                              \
    "sxtab16 %[xe], %[off], %[xo]\n\t"                                                       \
    "sxtab16 %[xo], %[off], %[xo], ror #8\n\t"                                               \
    NNRT_FC_ROW4("ldr %[wv], [%[w], %[d1]]\n\t", "a1")                                       \
    NNRT_FC_ROW4("ldr %[wv], [%[w], %[d2]]\n\t", "a2")                                       \
    NNRT_FC_ROW4("ldr %[wv], [%[w], %[d3]]\n\t", "a3")                                       \
    NNRT_FC_ROW4("ldr %[wv], [%[w]], #4\n\t", "a0")
#define NNRT_FC_CHUNK4_OPERANDS                                                              \
    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w), \
      [xe] "=&r"(xe), [xo] "=&r"(xo), [wv] "=&r"(wv), [wt] "=&r"(wt)                        \
    : [off] "r"(off2), [d1] "i"(depth), [d2] "i"(2 * depth), [d3] "i"(3 * depth)           \
    : "memory"
    if (((depth >> 2) & 1) != 0) {
        __asm__(NNRT_FC_CHUNK4 NNRT_FC_CHUNK4_OPERANDS);
    }
    while (x != x_end) {
        __asm__(NNRT_FC_CHUNK4 NNRT_FC_CHUNK4 NNRT_FC_CHUNK4_OPERANDS);
    }
#undef NNRT_FC_ROW4
#undef NNRT_FC_CHUNK4
#undef NNRT_FC_CHUNK4_OPERANDS
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#else
#define NNRT_FC_DOT4(depth) 0
#endif

/* The most units of one pass over the input: 8 on RV32 (internal/rv32_fc.h), else 4. */
#if NNRT_RV32
#define NNRT_FC_GROUP_MAX 8
#else
#define NNRT_FC_GROUP_MAX 4
#endif

/* What the output stage of units o, o + 1 ... reads of the parameters, read once: the
 * int8 stores of a loop over the units would otherwise make GCC read them again (a
 * store through int8_t * may alias anything). */
typedef struct {
    const int32_t *mult;  /* unit o's multiplier (per channel) or the layer's */
    const int32_t *shift; /* unit o's shift or the layer's */
    int32_t step;         /* 1 per channel, 0 per tensor */
    int32_t out_off;
    int32_t act_min;
    int32_t act_max;
} nnrt_fc_outs_t;

static NNRT_ALWAYS_INLINE nnrt_fc_outs_t nnrt_fc_outs(const nnrt_fc_s8_params_t *params,
                                                      int32_t o)
{
    const int32_t step = params->per_channel ? 1 : 0;
    const nnrt_fc_outs_t q = {params->multiplier + step * o, params->shift + step * o, step,
                              params->output_offset, params->act_min, params->act_max};
    return q;
}

/* The output stage of unit o + r: its sum acc (bias included) requantised, offset,
 * clamped. */
static NNRT_ALWAYS_INLINE int8_t nnrt_fc_out(const nnrt_fc_outs_t *q, int32_t r, int32_t acc,
                                             int all_fast)
{
    const int32_t mult = q->mult[q->step * r];
    const int32_t shift = q->shift[q->step * r];
    const int32_t e = -shift - 2; /* fast form: e' in [0, 29] */
    int32_t v;
    if (all_fast || (uint32_t)e <= 29u) {
        v = nnrt_rqf_fast(acc, mult, 1 << e, e + 1) + q->out_off;
    } else {
        nnrt_rqf_t rq;
        nnrt_rqf_init(&rq, mult, shift);
        v = nnrt_rqf(acc, &rq, q->out_off);
    }
    v = nnrt_sat8(v);
    if (q->act_min != INT8_MIN || q->act_max != INT8_MAX) {
        v = v < q->act_min ? q->act_min : (v > q->act_max ? q->act_max : v);
    }
    return (int8_t)v;
}

/* Units o .. o + rows - 1 (rows <= NNRT_FC_GROUP_MAX) of one input row: start values, dot products,
 * output stage. The specialised functions call it with rows a constant for the whole
 * groups, so that the loops over the units unroll and the accumulators stay in
 * registers (a variable count made GCC copy the bias with memcpy() and keep the
 * accumulators on the stack); the generic kernel keeps one instance (its code size). */
static NNRT_ALWAYS_INLINE void nnrt_fc_units(const nnrt_fc_s8_params_t *params,
                                             const int8_t *input, const int8_t *weights,
                                             const int32_t *bias, int8_t *output, int32_t o,
                                             int32_t rows, int all_fast)
{
    const int32_t depth = params->accum_depth;
    const int32_t in_off = params->input_offset;
    const int32_t w_off = params->weights_offset;
    const int8_t *w = weights + (size_t)o * (size_t)depth;
    int32_t acc[NNRT_FC_GROUP_MAX] = {0};
    for (int32_t r = 0; r < rows; ++r) {
        acc[r] = bias != NULL ? bias[o + r] : 0;
    }
#if NNRT_RV32
    /* RV32IM: 8 (or 4) rows share each input (internal/rv32_fc.h) */
    nnrt_rv_fc_rows(input, w, depth, in_off, w_off, acc, rows);
#else
#if NNRT_MVE
    if (w_off == 0) {
        nnrt_mve_dot_rows(input, w, depth, depth, in_off, acc, rows);
    } else
#endif
#if NNRT_DSP && defined(__OPTIMIZE__) && defined(__GNUC__)
    if (NNRT_FC_DOT4(depth) && rows == 4 && w_off == 0) {
        nnrt_fc_dot4(input, w, depth, in_off, acc);
    } else
#endif
    if (rows == 3 && w_off == 0) {
        nnrt_dot3_s8(input, w, depth, depth, in_off, acc);
    } else {
        for (int32_t r = 0; r < rows; ++r, w += depth) {
            if (w_off == 0) {
                acc[r] = nnrt_dot1_s8(input, w, depth, in_off, acc[r]);
                continue;
            }
            for (int32_t d = 0; d < depth; ++d) {
                acc[r] += ((int32_t)w[d] + w_off) * ((int32_t)input[d] + in_off);
            }
        }
    }
#endif
    const nnrt_fc_outs_t q = nnrt_fc_outs(params, o);
    for (int32_t r = 0; r < rows; ++r) {
        output[o + r] = nnrt_fc_out(&q, r, acc[r], all_fast);
    }
}

/* all_fast: 1 when every shift is known (build time) to take the fast form. Arguments
 * checked by the caller. */
static NNRT_ALWAYS_INLINE void nnrt_fc_body(const nnrt_fc_s8_params_t *params,
                                            const int8_t *input, const int8_t *weights,
                                            const int32_t *bias, int8_t *output, int all_fast)
{
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    /* output units per pass over the input (Helium: 3, internal/mve_dot.h) */
    const int32_t group = NNRT_RV32 ? NNRT_FC_GROUP_MAX
                          : (!NNRT_MVE && NNRT_FC_DOT4(depth)) ? 4 : 3;

    for (int32_t b = 0; b < params->batches; ++b, input += depth, output += units) {
        int32_t o = 0;
        if (NNRT_FC_BUILD_CONST(units)) {
            for (; o + group <= units; o += group) {
                nnrt_fc_units(params, input, weights, bias, output, o, group, all_fast);
            }
        }
        for (; o < units; o += group) {
            const int32_t rows = units - o < group ? units - o : group;
            nnrt_fc_units(params, input, weights, bias, output, o, rows, all_fast);
        }
    }
}

#endif /* NNRT_KERNELS_INTERNAL_FC_BODY_H_ */
