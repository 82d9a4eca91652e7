/*
 * int8 UNIDIRECTIONAL_SEQUENCE_LSTM with an int16 cell state, in the order of operations
 * of TFLM's integer EvalLstm (lstm_eval.h: 8-bit activations and weights, 16-bit cell,
 * 32-bit bias; see nnrt/kernels/sequence.h). The step is internal/lstm_body.h, shared
 * with the 16x8 variant; this file holds the int8 gate FullyConnected.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/sequence.h"
#include "../internal/dot.h"
#include "../internal/requant.h"
#include "../internal/simd.h"

#if !NNRT_DSP
/* Without the DSP extension the input offset costs an instruction per input in every
 * dot product call (seven per gate FC over the same row): the row is offset once into
 * int16 on the stack, up to this depth (deeper rows take the calls with the offset). */
#define LSTM_FC_STACK_DEPTH 256
#endif

/* One row of a gate FC: int32 sums of w * (xb - x_zp) + bias, rescaled. xo is the row
 * already offset into int16, or NULL for dot products that add the offset; inlined once
 * per case, so each copy keeps one path and its registers. */
static NNRT_ALWAYS_INLINE void lstm_fc_row(const int8_t *xb, const int16_t *xo, int32_t x_zp,
                                           const int8_t *w, const int32_t *bias,
                                           const nnrt_rqf_t *q, int32_t depth,
                                           int32_t units, int16_t *ob)
{
    int32_t o = 0;
    int32_t acc[3];

    /* integer sums: the order of the terms does not change them */
    for (; o + 3 <= units; o += 3) {
        const int8_t *wo = w + (size_t)o * (size_t)depth;

        /* one test of bias for the three (a test per unit costs the Cortex-M3 a loop) */
        if (bias != NULL) {
            acc[0] = bias[o];
            acc[1] = bias[o + 1];
            acc[2] = bias[o + 2];
        } else {
            acc[0] = acc[1] = acc[2] = 0;
        }
        if (xo != NULL) {
            nnrt_dot3_s16x8(xo, wo, depth, depth, acc);
        } else {
            nnrt_dot3_s8(xb, wo, depth, depth, -x_zp, acc);
        }
        for (int k = 0; k < 3; ++k) {
            ob[o + k] = nnrt_sat16(nnrt_rqf_nonpos(acc[k], q, 0));
        }
    }
    for (; o < units; ++o) {
        const int8_t *wo = w + (size_t)o * (size_t)depth;
        const int32_t b0 = (bias != NULL) ? bias[o] : 0;
        const int32_t a = (xo != NULL) ? nnrt_dot1_s16x8(xo, wo, depth, b0)
                                       : nnrt_dot1_s8(xb, wo, depth, -x_zp, b0);

        ob[o] = nnrt_sat16(nnrt_rqf_nonpos(a, q, 0));
    }
}

/* int32 sums of w * (x - x_zp) + bias, rescaled by the 32-bit multiplier */
static void lstm_fc(const int8_t *x, int32_t x_zp, const int8_t *w, const int32_t *bias,
                    int32_t mult, int32_t shift, int32_t rows, int32_t depth,
                    int32_t units, int16_t *out)
{
    nnrt_rqf_t q;
#if !NNRT_DSP
    int16_t xo[LSTM_FC_STACK_DEPTH];
#endif

    nnrt_rqf_init(&q, mult, shift);
    for (int32_t b = 0; b < rows; ++b) {
        const int8_t *xb = x + (size_t)b * (size_t)depth;
        int16_t *ob = out + (size_t)b * (size_t)units;

#if !NNRT_DSP
        if (depth <= LSTM_FC_STACK_DEPTH) {
            for (int32_t d = 0; d < depth; ++d) {
                xo[d] = (int16_t)((int32_t)xb[d] - x_zp);
            }
            lstm_fc_row(xb, xo, x_zp, w, bias, &q, depth, units, ob);
            continue;
        }
#endif
        lstm_fc_row(xb, NULL, x_zp, w, bias, &q, depth, units, ob);
    }
}

#define LSTM_ACT_T int8_t
#define LSTM_ACT_MIN INT8_MIN
#define LSTM_ACT_MAX INT8_MAX
#define LSTM_PARAMS_T nnrt_lstm_s8_params_t
#define LSTM_ENTRY nnrt_lstm_s8
#include "../internal/lstm_body.h"
