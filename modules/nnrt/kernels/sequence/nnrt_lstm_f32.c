/*
 * float32 UNIDIRECTIONAL_SEQUENCE_LSTM in the order of operations of TFLM's EvalLstm
 * (see nnrt/kernels/sequence.h); the sigmoid and tanh are nnrt's LOGISTIC and TANH
 * float kernels (TFLM's reference ones).
 */
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/sequence.h"

#define LSTM_TANH 4
#define LSTM_SIGMOID 6

/* std::min(std::max(v, -FLT_MAX), FLT_MAX): TFLM's ActivationFunctionWithMinMax. */
static float lstm_clamp(float v)
{
    v = (v < -FLT_MAX) ? -FLT_MAX : v;
    return (FLT_MAX < v) ? FLT_MAX : v;
}

/* sum_d x[d] * w0[d] and sum_d x[d] * w1[d], each from 0 in the order d = 0, 1, ... (the
 * reference's): two weight rows per pass over x, four inputs per iteration, so each
 * input is loaded once for both rows and the loop's compare and branch come once per
 * eight products. */
static void lstm_dot2(const float *x, const float *w0, const float *w1, int32_t depth,
                      float *t0, float *t1)
{
    float a0 = 0.0f;
    float a1 = 0.0f;
    int32_t d = 0;

    for (; d + 4 <= depth; d += 4) {
        const float x0 = x[d];
        const float x1 = x[d + 1];
        const float x2 = x[d + 2];
        const float x3 = x[d + 3];
        a0 += x0 * w0[d];
        a1 += x0 * w1[d];
        a0 += x1 * w0[d + 1];
        a1 += x1 * w1[d + 1];
        a0 += x2 * w0[d + 2];
        a1 += x2 * w1[d + 2];
        a0 += x3 * w0[d + 3];
        a1 += x3 * w1[d + 3];
    }
    for (; d < depth; ++d) {
        a0 += x[d] * w0[d];
        a1 += x[d] * w1[d];
    }
    *t0 = a0;
    *t1 = a1;
}

/* out[b][o] = clamp(sum_d x[b][d] * w[o][d] + bias[o]) (bias NULL: + 0), TFLM's
 * reference FullyConnected (its summation order, lstm_dot2). */
static void lstm_fc(const float *x, const float *w, const float *bias, int32_t rows,
                    int32_t depth, int32_t units, float *out)
{
    for (int32_t b = 0; b < rows; ++b) {
        const float *xb = x + (size_t)b * (size_t)depth;
        float *ob = out + (size_t)b * (size_t)units;
        for (int32_t o = 0; o < units; o += 2) {
            const float *wo = w + (size_t)o * (size_t)depth;
            /* an odd last row: its own weights twice (the second result unused) */
            const float *w1 = (o + 1 < units) ? wo + depth : wo;
            float t0;
            float t1;
            lstm_dot2(xb, wo, w1, depth, &t0, &t1);
            ob[o] = lstm_clamp(t0 + (bias != NULL ? bias[o] : 0.0f));
            if (o + 1 < units) {
                ob[o + 1] = lstm_clamp(t1 + (bias != NULL ? bias[o + 1] : 0.0f));
            }
        }
    }
}

static void lstm_gate(const nnrt_lstm_f32_params_t *p, int g, const float *x,
                      const float *h, int32_t rows, int activation, float *out, float *tmp)
{
    const int32_t n = rows * p->state_size;

    lstm_fc(x, p->w_input[g], p->bias[g], rows, p->input_size, p->state_size, out);
    lstm_fc(h, p->w_recurrent[g], NULL, rows, p->state_size, p->state_size, tmp);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = out[i] + tmp[i];
    }
    if (activation == LSTM_TANH) {
        (void)nnrt_tanh_f32(out, out, n);
    } else {
        (void)nnrt_logistic_f32(out, out, n);
    }
}

/* One step over `rows` batch rows: x [rows, input], h and c [rows, state]. */
static void lstm_step(const nnrt_lstm_f32_params_t *p, const float *x, float *h, float *c,
                      int32_t rows, float *out, float *buf)
{
    const int32_t n = rows * p->state_size;
    const size_t bn = (size_t)p->batches * (size_t)p->state_size;
    float *forget = buf;
    float *in_gate = buf + bn;
    float *cell_gate = buf + 2 * bn;
    float *tmp = buf + 3 * bn;

    lstm_gate(p, 1, x, h, rows, LSTM_SIGMOID, forget, tmp);
    lstm_gate(p, 0, x, h, rows, LSTM_SIGMOID, in_gate, tmp);
    lstm_gate(p, 2, x, h, rows, p->cell_activation, cell_gate, tmp);
    for (int32_t i = 0; i < n; ++i) {
        c[i] = lstm_clamp(forget[i] * c[i]);
    }
    for (int32_t i = 0; i < n; ++i) {
        in_gate[i] = lstm_clamp(in_gate[i] * cell_gate[i]);
    }
    for (int32_t i = 0; i < n; ++i) {
        c[i] = c[i] + in_gate[i];
    }
    if (p->cell_clip > 0.0f) {
        const float clip = p->cell_clip;
        for (int32_t i = 0; i < n; ++i) {
            float v = (c[i] < clip) ? c[i] : clip;   /* std::min(clip, v) */
            c[i] = (v < -clip) ? -clip : v;          /* std::max(., -clip) */
        }
    }
    /* output gate into in_gate's buffer, tanh(c) into forget's */
    lstm_gate(p, 3, x, h, rows, LSTM_SIGMOID, in_gate, tmp);
    (void)nnrt_tanh_f32(c, forget, n);
    for (int32_t i = 0; i < n; ++i) {
        h[i] = lstm_clamp(forget[i] * in_gate[i]);
    }
    memcpy(out, h, (size_t)n * sizeof(float));
}

nnrt_status_t nnrt_lstm_f32(const nnrt_lstm_f32_params_t *params, const float *input,
                            float *hidden_state, float *cell_state, float *output,
                            void *scratch)
{
    const nnrt_lstm_f32_params_t *p = params;

    if (p == NULL || input == NULL || hidden_state == NULL || cell_state == NULL
        || output == NULL || scratch == NULL || p->batches < 1 || p->time_steps < 1
        || p->input_size < 1 || p->state_size < 1
        || (p->cell_activation != LSTM_TANH && p->cell_activation != LSTM_SIGMOID)) {
        return NNRT_ERR_ARG;
    }
    for (int g = 0; g < 4; ++g) {
        if (p->w_input[g] == NULL || p->w_recurrent[g] == NULL || p->bias[g] == NULL) {
            return NNRT_ERR_ARG;
        }
    }
    float *buf = (float *)scratch;
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
