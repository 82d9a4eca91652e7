/*
 * int8 ADD with broadcasting, TFLM reference arithmetic.
 * Each input is offset, shifted left by left_shift and rescaled by its own multiplier;
 * the sum is rescaled to the output, offset and clamped to the activation range.
 * The three rescalings (all shifts <= 0) run in the exact one-multiply form of
 * internal/requant.h (nnrt_rq_nonpos()) when the multipliers are >= 0, as TFLM's
 * QuantizeMultiplier makes them; else TFLM's two steps.
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

/* TFLM's two steps, for multipliers the fast form does not take (negative). */
NNRT_ADD_SUB_S8_APPLY(apply_ref, NNRT_COLD NNRT_NOINLINE, +)

nnrt_status_t nnrt_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || NNRT_ADD_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_add_s8(params, input1, input2, output)) {
        return NNRT_OK;
    }
#endif
    const nnrt_broadcast_t *b = &params->bcast;
    NNRT_BINARY_ROW_GEOMETRY(b);
    const int fast = params->input1_multiplier >= 0 && params->input2_multiplier >= 0
                     && params->output_multiplier >= 0;
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
