/*
 * int16 UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's 16x8: int16 activations and hidden state,
 * int8 weights, int64 biases, int16 cell state; EvalLstm<int16_t, int8_t, int16_t,
 * int64_t> in TFLM's unidirectional_sequence_lstm.cc). The step is
 * internal/lstm_body.h, shared with the int8 variant; this file holds the 16x8 gate
 * FullyConnected: a 64-bit accumulator and TFLM's 64-bit requantisation.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/sequence.h"

/* int64 sums of w * (x - x_zp) + bias, rescaled by the 64-bit multiplier. The terms
 * are added in 32-bit runs of at most 255 (|w * (x - x_zp)| < 2^23: a run fits). */
static void lstm_fc(const int16_t *x, int32_t x_zp, const int8_t *w, const int64_t *bias,
                    int32_t mult, int32_t shift, int32_t rows, int32_t depth,
                    int32_t units, int16_t *out)
{
    for (int32_t b = 0; b < rows; ++b) {
        const int16_t *xb = x + (size_t)b * (size_t)depth;
        for (int32_t o = 0; o < units; ++o) {
            const int8_t *wo = w + (size_t)o * (size_t)depth;
            int64_t acc = (bias != NULL) ? bias[o] : 0;
            for (int32_t d0 = 0; d0 < depth; d0 += 255) {
                const int32_t d1 = depth - d0 < 255 ? depth : d0 + 255;
                int32_t run = 0;
                for (int32_t d = d0; d < d1; ++d) {
                    run += (int32_t)wo[d] * ((int32_t)xb[d] - x_zp);
                }
                acc += run;
            }
            out[(size_t)b * (size_t)units + (size_t)o] = (int16_t)nnrt_clamp_i32(
                nnrt_multiply_by_quantized_multiplier_s64(acc, mult, (int)shift),
                INT16_MIN, INT16_MAX);
        }
    }
}

#define LSTM_ACT_T int16_t
#define LSTM_ACT_MIN INT16_MIN
#define LSTM_ACT_MAX INT16_MAX
#define LSTM_PARAMS_T nnrt_lstm_s16_params_t
#define LSTM_ENTRY nnrt_lstm_s16
#include "../internal/lstm_body.h"
