/*
 * int8 ADD with broadcasting, TFLM reference arithmetic.
 * Each input is offset, shifted left by left_shift and rescaled by its own multiplier;
 * the sum is rescaled to the output, offset and clamped to the activation range.
 * The three rescalings (all shifts <= 0) run in the exact one-multiply form of
 * internal/requant.h (nnrt_rq_nonpos()) when the multipliers are >= 0, as TFLM's
 * QuantizeMultiplier makes them; else TFLM's two steps. Large outputs look the two
 * input rescalings up in per-call tables of the 256 int8 values (add_tabled()).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../cmsis/nnrt_cmsis.h"
#include "../internal/requant.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"
#include "../internal/mve_add.h"

/* TFLM's two steps, for multipliers the fast form does not take (negative). */
NNRT_ADD_SUB_S8_APPLY(apply_ref, NNRT_COLD NNRT_NOINLINE, +)

/* Outputs at least this large take the tabled loop: its 2 x 256 rescalings per call cost
 * what about 30 elements' per-element rescalings do. */
#define NNRT_ADD_TABLE_MIN_ELEMENTS 512

static int32_t output_elements(const nnrt_broadcast_t *b)
{
    int32_t total = 1;
    for (int32_t d = 0; d < b->rank; ++d) {
        total *= b->dims[d];
    }
    return total;
}

/*
 * The fast loop with each input's rescaled term looked up: an int8 input takes only 256
 * values, so t1[x] = rescale1((offset1 + x) << left_shift) is the same arithmetic as the
 * per-element loop, computed once per value (bit-exact by construction); per element
 * there remain two loads, the add and the output's rescaling (its shift e >= 2: the
 * one-multiply fast form with its constants hoisted). The tables are 2 KB of the
 * caller's stack, as softmax's exp table (internal/softmax_s8.h) is 1 KB.
 */
static NNRT_NOINLINE void add_tabled(const nnrt_add_s8_params_t *params, const int8_t *input1,
                                     const int8_t *input2, int8_t *output)
{
    int32_t t1[256];
    int32_t t2[256];
    const int32_t ls = params->left_shift;
    for (int32_t v = -128; v < 128; ++v) {
        t1[v + 128] = nnrt_rq_nonpos((int32_t)((uint32_t)(params->input1_offset + v) << ls),
                                     params->input1_multiplier, -params->input1_shift);
        t2[v + 128] = nnrt_rq_nonpos((int32_t)((uint32_t)(params->input2_offset + v) << ls),
                                     params->input2_multiplier, -params->input2_shift);
    }
    const int32_t *p1 = t1 + 128;
    const int32_t *p2 = t2 + 128;
    const int32_t mo = params->output_multiplier;
    const int32_t eo = -params->output_shift;
    const int32_t half = (int32_t)1 << (eo - 2);
    const int32_t rsh = eo - 1;
    const int32_t out_off = params->output_offset;
    const int32_t lo = params->act_min;
    const int32_t hi = params->act_max;
    const nnrt_broadcast_t *b = &params->bcast;
    NNRT_BINARY_ROW_GEOMETRY(b);
    NNRT_BINARY_WALK(int8_t, b, input1, input2, output,
        for (int32_t i = 0; i < n; ++i) {
            const int32_t sum = p1[a[i * s1]] + p2[c[i * s2]];
            const int32_t raw = nnrt_rqf_fast(sum, mo, half, rsh) + out_off;
            output[i] = (int8_t)nnrt_clamp_i32(raw, lo, hi);
        });
}

nnrt_status_t nnrt_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || NNRT_ADD_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_MVE
    if (nnrt_mve_add_s8(params, input1, input2, output)) {
        return NNRT_OK;
    }
#endif
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_add_s8(params, input1, input2, output)) {
        return NNRT_OK;
    }
#endif
    const nnrt_broadcast_t *b = &params->bcast;
    const int fast = params->input1_multiplier >= 0 && params->input2_multiplier >= 0
                     && params->output_multiplier >= 0;
    if (fast && nnrt_rqf_fast_shift(params->output_shift)
        && output_elements(b) >= NNRT_ADD_TABLE_MIN_ELEMENTS) {
        add_tabled(params, input1, input2, output);
        return NNRT_OK;
    }
    NNRT_BINARY_ROW_GEOMETRY(b);
    const int32_t off1_in = params->input1_offset;
    const int32_t off2_in = params->input2_offset;
    const int32_t ls = params->left_shift;
    const int32_t m1 = params->input1_multiplier;
    const int32_t m2 = params->input2_multiplier;
    const int32_t mo = params->output_multiplier;
    const int32_t e1 = -params->input1_shift;
    const int32_t e2 = -params->input2_shift;
    const int32_t eo = -params->output_shift;
    const int32_t out_off = params->output_offset;
    const int32_t lo = params->act_min;
    const int32_t hi = params->act_max;
    NNRT_BINARY_WALK(int8_t, b, input1, input2, output,
        if (!fast) {
            for (int32_t i = 0; i < n; ++i) {
                output[i] = apply_ref(params, a[i * s1], c[i * s2]);
            }
        } else {
            for (int32_t i = 0; i < n; ++i) {
                /* |offset + x| <= 255: the left shift (<= 24 by the check) stays in int32 */
                const int32_t x1 = (int32_t)((uint32_t)(off1_in + a[i * s1]) << ls);
                const int32_t x2 = (int32_t)((uint32_t)(off2_in + c[i * s2]) << ls);
                const int32_t sum = nnrt_rq_nonpos(x1, m1, e1) + nnrt_rq_nonpos(x2, m2, e2);
                const int32_t raw = nnrt_rq_nonpos(sum, mo, eo) + out_off;
                output[i] = (int8_t)nnrt_clamp_i32(raw, lo, hi);
            }
        });
    return NNRT_OK;
}
