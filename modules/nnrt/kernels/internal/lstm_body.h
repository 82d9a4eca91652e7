/*
 * Internal to the nnrt kernels: the integer UNIDIRECTIONAL_SEQUENCE_LSTM of TFLM's
 * EvalLstm (lstm_eval.h), one body for both activation types (nnrt/kernels/sequence.h):
 * int8 (nnrt_lstm_s8, int32 biases) and int16 (16x8, nnrt_lstm_s16, int64 biases). The
 * gate and cell arithmetic is the same for both (int16 cell state, Q3.12 gate
 * pre-activations, Q0.15 gate outputs through nnrt's int16 LOGISTIC / TANH); the two
 * differ only in the gate FullyConnected (its accumulator and requantisation) and the
 * hidden state's type.
 *
 * Include once per variant, after defining:
 *   LSTM_ACT_T      the activation type (input, hidden state, output)
 *   LSTM_ACT_MIN/MAX its range
 *   LSTM_PARAMS_T   the variant's parameter struct (NNRT_LSTM_INT_FIELDS)
 *   LSTM_ENTRY      the public function's name
 * and a function
 *   static void lstm_fc(const LSTM_ACT_T *x, int32_t x_zp, const int8_t *w,
 *                       const <bias type> *bias, int32_t mult, int32_t shift,
 *                       int32_t rows, int32_t depth, int32_t units, int16_t *out);
 * out[b][o] = clamp16(rescale(sum_d w[o][d] * (x[b][d] - x_zp) + bias[o])), bias NULL:
 * none (TFLM's integer FullyConnected to an int16 output of zero point 0).
 */
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/sequence.h"
#include "requant.h"

#define LSTM_TANH 4
#define LSTM_SIGMOID 6

/* Q3.12 -> Q0.15: one table step is 2^9 (sigmoid) or 2^8 (tanh) units of 1/(3 * 2^12). */
static const nnrt_sigmoid_s16_params_t lstm_q3_12 = {3, 0};

/* gate = activation(sat16(FC(x, W_in, bias) + FC(h, W_rec))) */
static void lstm_gate(const LSTM_PARAMS_T *p, int g, const LSTM_ACT_T *x,
                      const LSTM_ACT_T *h, int32_t rows, int activation, int16_t *out,
                      int16_t *tmp)
{
    const int32_t n = rows * p->state_size;

    lstm_fc(x, p->input_zero_point, p->w_input[g], p->bias[g], p->input_mult[g],
            p->input_shift[g], rows, p->input_size, p->state_size, out);
    lstm_fc(h, p->hidden_zero_point, p->w_recurrent[g], NULL, p->recurrent_mult[g],
            p->recurrent_shift[g], rows, p->state_size, p->state_size, tmp);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = nnrt_sat16((int32_t)out[i] + tmp[i]);
    }
    if (activation == LSTM_TANH) {
        (void)nnrt_tanh_s16(&lstm_q3_12, out, out, n);
    } else {
        (void)nnrt_logistic_s16(&lstm_q3_12, out, out, n);
    }
}

/* One step over `rows` batch rows: x [rows, input], h [rows, state], c int16. */
static void lstm_step(const LSTM_PARAMS_T *p, const LSTM_ACT_T *x, LSTM_ACT_T *h,
                      int16_t *c, int32_t rows, LSTM_ACT_T *out, int16_t *buf)
{
    const int32_t n = rows * p->state_size;
    const size_t bn = (size_t)p->batches * (size_t)p->state_size;
    int16_t *forget = buf;
    int16_t *in_gate = buf + bn;
    int16_t *cell_gate = buf + 2 * bn;
    int16_t *tmp = buf + 3 * bn;
    const nnrt_sigmoid_s16_params_t cell_tanh = {p->cell_tanh_multiplier,
                                                 p->cell_tanh_shift};

    lstm_gate(p, 1, x, h, rows, LSTM_SIGMOID, forget, tmp);
    lstm_gate(p, 0, x, h, rows, LSTM_SIGMOID, in_gate, tmp);
    lstm_gate(p, 2, x, h, rows, p->cell_activation, cell_gate, tmp);
    /* c = clip(sat16(clamp16(rescale(f * c)) + clamp16(rescale(i * g)))) in one pass
     * (TFLM's two MulElementwise, the saturating add and the clip; no clip: the int16
     * range, which the saturation already holds) */
    nnrt_rqf_t fq;
    nnrt_rqf_t uq;
    const int32_t hi = (p->cell_clip > 0) ? p->cell_clip : INT16_MAX;
    const int32_t lo = (p->cell_clip > 0) ? -p->cell_clip : INT16_MIN;

    nnrt_rqf_init(&fq, p->forget_mult, p->forget_shift);
    nnrt_rqf_init(&uq, p->update_mult, p->update_shift);
    for (int32_t i = 0; i < n; ++i) {
        const int32_t fc = nnrt_sat16(nnrt_rqf((int32_t)forget[i] * c[i], &fq, 0));
        const int32_t ig = nnrt_sat16(nnrt_rqf((int32_t)in_gate[i] * cell_gate[i], &uq, 0));
        int32_t v = nnrt_sat16(fc + ig);
        v = (v < hi) ? v : hi; /* std::min(clip, v) */
        c[i] = (int16_t)((v < lo) ? lo : v);
    }
    /* output gate into in_gate's buffer, tanh(c) into forget's */
    lstm_gate(p, 3, x, h, rows, LSTM_SIGMOID, in_gate, tmp);
    (void)nnrt_tanh_s16(&cell_tanh, c, forget, n);
    nnrt_rqf_t hq;

    nnrt_rqf_init(&hq, p->hidden_mult, p->hidden_shift);
    for (int32_t i = 0; i < n; ++i) {
        const int32_t v = nnrt_rqf((int32_t)forget[i] * in_gate[i], &hq, p->hidden_zero_point);
        h[i] = (LSTM_ACT_T)nnrt_clamp_i32(v, LSTM_ACT_MIN, LSTM_ACT_MAX);
    }
    memcpy(out, h, (size_t)n * sizeof(LSTM_ACT_T));
}

nnrt_status_t LSTM_ENTRY(const LSTM_PARAMS_T *params, const LSTM_ACT_T *input,
                         LSTM_ACT_T *hidden_state, int16_t *cell_state, LSTM_ACT_T *output,
                         void *scratch)
{
    const LSTM_PARAMS_T *p = params;

    if (p == NULL || input == NULL || hidden_state == NULL || cell_state == NULL
        || output == NULL || scratch == NULL || p->batches < 1 || p->time_steps < 1
        || p->input_size < 1 || p->state_size < 1
        || (p->cell_activation != LSTM_TANH && p->cell_activation != LSTM_SIGMOID)
        || p->cell_tanh_multiplier < 1 || p->cell_tanh_multiplier > 0xFFFF
        || p->cell_tanh_shift < 0 || p->cell_tanh_shift > 31
        || p->cell_clip < 0 || p->cell_clip > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    for (int g = 0; g < 4; ++g) {
        if (p->w_input[g] == NULL || p->w_recurrent[g] == NULL || p->bias[g] == NULL) {
            return NNRT_ERR_ARG;
        }
    }
    int16_t *buf = (int16_t *)scratch;
    const size_t in_step = (size_t)p->input_size;
    const size_t st = (size_t)p->state_size;

    if (p->time_major) {
        for (int32_t t = 0; t < p->time_steps; ++t) {
            const size_t rows = (size_t)p->batches;
            lstm_step(p, input + (size_t)t * rows * in_step, hidden_state, cell_state,
                      p->batches, output + (size_t)t * rows * st, buf);
        }
        return NNRT_OK;
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t t = 0; t < p->time_steps; ++t) {
            const size_t k = (size_t)b * (size_t)p->time_steps + (size_t)t;
            lstm_step(p, input + k * in_step, hidden_state + (size_t)b * st,
                      cell_state + (size_t)b * st, 1, output + k * st, buf);
        }
    }
    return NNRT_OK;
}
