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

/* int32 sums of w * (x - x_zp) + bias, rescaled by the 32-bit multiplier */
static void lstm_fc(const int8_t *x, int32_t x_zp, const int8_t *w, const int32_t *bias,
                    int32_t mult, int32_t shift, int32_t rows, int32_t depth,
                    int32_t units, int16_t *out)
{
    nnrt_rqf_t q;

    nnrt_rqf_init(&q, mult, shift);
    for (int32_t b = 0; b < rows; ++b) {
        const int8_t *xb = x + (size_t)b * (size_t)depth;
        int16_t *ob = out + (size_t)b * (size_t)units;
        int32_t o = 0;
        int32_t acc[3];
        /* integer sums: the order of the terms does not change them */
        for (; o + 3 <= units; o += 3) {
            for (int k = 0; k < 3; ++k) {
                acc[k] = (bias != NULL) ? bias[o + k] : 0;
            }
            nnrt_dot3_s8(xb, w + (size_t)o * (size_t)depth, depth, depth, -x_zp, acc);
            for (int k = 0; k < 3; ++k) {
                ob[o + k] = nnrt_sat16(nnrt_rqf_nonpos(acc[k], &q, 0));
            }
        }
        for (; o < units; ++o) {
            const int32_t a = nnrt_dot1_s8(xb, w + (size_t)o * (size_t)depth, depth, -x_zp,
                                           (bias != NULL) ? bias[o] : 0);
            ob[o] = nnrt_sat16(nnrt_rqf_nonpos(a, &q, 0));
        }
    }
}

#define LSTM_ACT_T int8_t
#define LSTM_ACT_MIN INT8_MIN
#define LSTM_ACT_MAX INT8_MAX
#define LSTM_PARAMS_T nnrt_lstm_s8_params_t
#define LSTM_ENTRY nnrt_lstm_s8
#include "../internal/lstm_body.h"
