/**
 * @file sequence.h
 * @brief Stateful sequence operators: SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM (int8 with an
 *        int16 cell state, float32).
 *
 * The state (SVDF's activation state) is a variable tensor: nnopt keeps it in the
 * model's persistent region, outside the arena, and the kernel updates it in place on
 * every call, so one inference carries it to the next. Bit-exact with TensorFlow Lite
 * Micro's reference SVDF (svdf_common.cc: EvalIntegerSvdfReference and
 * EvalFloatSvdfReference):
 *
 * 1. the state `[batches, num_filters, memory_size]` shifts left by one element (the
 *    whole buffer, as one flat array);
 * 2. feature matmul: for each batch b and filter f, the dot product of the input row and
 *    weights_feature row f goes into the newest column, state[b][f][memory_size - 1]
 *    (int8: requantised with (mult1, shift1), clamped to the state type, then plus the
 *    state zero point, narrowed to the state type modulo its width: the arithmetic of
 *    the tflite-micro interpreter nnopt is checked against; a later TFLM adds the zero
 *    point before the clamp, which differs only for an int8 state with a non-zero zero
 *    point that overflows);
 * 3. time: scratch[b][f] = sum_m weights_time[f][m] * (state[b][f][m] - state zero point);
 * 4. output[b][u] = bias[u] + sum_r scratch[b][u * rank + r] (int8: requantised with
 *    (mult2, shift2), plus the output zero point, clamped to int8; no fused activation,
 *    as TFLM; float32: the fused activation).
 *
 * Parameters are computed at build time by `nnopt.lowering.sequence`.
 */
#ifndef NNRT_KERNELS_SEQUENCE_H_
#define NNRT_KERNELS_SEQUENCE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** int8 SVDF with an int16 (or int8) activation state and time weights of that type. */
typedef struct {
    int32_t batches;           /**< >= 1 */
    int32_t input_size;        /**< >= 1 */
    int32_t num_filters;       /**< num_units * rank */
    int32_t num_units;         /**< >= 1 */
    int32_t rank;              /**< >= 1 */
    int32_t memory_size;       /**< >= 1 */
    int32_t state_bytes;       /**< 2: int16 state and time weights; 1: int8 */
    int32_t input_zero_point;  /**< in [-128, 127] */
    int32_t state_zero_point;  /**< the state's zero point */
    int32_t output_zero_point; /**< in [-128, 127] */
    int32_t mult1;             /**< input * feature -> state: Q31 multiplier */
    int32_t shift1;            /**< and shift (> 0: left) */
    int32_t mult2;             /**< state * time -> output */
    int32_t shift2;
} nnrt_svdf_s8_params_t;

/** float32 SVDF. */
typedef struct {
    int32_t batches;
    int32_t input_size;
    int32_t num_filters;
    int32_t num_units;
    int32_t rank;
    int32_t memory_size;
    int32_t activation;        /**< TFLite's enum: 0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6 */
} nnrt_svdf_f32_params_t;

/** Scratch bytes of nnrt_svdf_s8: int32 per filter and per unit of every batch. */
#define NNRT_SVDF_S8_SCRATCH_BYTES(batches, filters, units) \
    ((size_t)(batches) * ((size_t)(filters) + (size_t)(units)) * sizeof(int32_t))
/** Scratch bytes of nnrt_svdf_f32: a float per filter of every batch. */
#define NNRT_SVDF_F32_SCRATCH_BYTES(batches, filters) \
    ((size_t)(batches) * (size_t)(filters) * sizeof(float))

/**
 * int8 SVDF. `weights_time` and `state` are int16_t (state_bytes 2) or int8_t (1);
 * `bias` int32 [num_units] (TFLM requires it); `state` [batches, num_filters *
 * memory_size] is read and updated in place. `scratch`: NNRT_SVDF_S8_SCRATCH_BYTES.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or inconsistent parameters.
 */
nnrt_status_t nnrt_svdf_s8(const nnrt_svdf_s8_params_t *params, const int8_t *input,
                           const int8_t *weights_feature, const void *weights_time,
                           const int32_t *bias, void *state, int8_t *output, void *scratch);

/**
 * float32 SVDF; `bias` may be NULL (zeros). `scratch`: NNRT_SVDF_F32_SCRATCH_BYTES.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or inconsistent parameters.
 */
nnrt_status_t nnrt_svdf_f32(const nnrt_svdf_f32_params_t *params, const float *input,
                            const float *weights_feature, const float *weights_time,
                            const float *bias, float *state, float *output, void *scratch);

/**
 * float32 UNIDIRECTIONAL_SEQUENCE_LSTM as TFLM's EvalLstm (lstm_eval.h): no peephole,
 * projection or layer norm. Each time step, for the gates forget, input, cell (in that
 * order): gate = FC(x_t, W_in, bias) + FC(h, W_rec) (each FC result clamped to
 * [-FLT_MAX, FLT_MAX]), then sigmoid (the cell gate: `cell_activation`); then
 * c = f * c + i * g (products clamped as above), clipped to [-cell_clip, cell_clip]
 * when cell_clip > 0; the output gate likewise; h = tanh(c) * o; output[t] = h.
 * Batch-major input [batches, time, input] runs batch after batch with its own state
 * row; time-major [time, batches, input] runs all batches per step. The hidden and cell
 * states [batches, state_size] are variable tensors, updated in place.
 */
typedef struct {
    int32_t batches;
    int32_t time_steps;
    int32_t input_size;
    int32_t state_size;
    int32_t time_major;        /**< 1: input [time, batches, input] */
    int32_t cell_activation;   /**< TFLite's enum: 4 TANH, 6 SIGMOID (the cell gate) */
    float cell_clip;           /**< > 0: clip the cell state to [-cell_clip, cell_clip] */
    const float *w_input[4];   /**< input-to-{input, forget, cell, output} [state, input] */
    const float *w_recurrent[4]; /**< recurrent-to-{i, f, c, o} [state, state] */
    const float *bias[4];      /**< {i, f, c, o} gate biases [state] */
} nnrt_lstm_f32_params_t;

/** Scratch bytes of nnrt_lstm_f32: four buffers of batches x state floats. */
#define NNRT_LSTM_F32_SCRATCH_BYTES(batches, state) \
    (4u * (size_t)(batches) * (size_t)(state) * sizeof(float))

/**
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or inconsistent parameters.
 */
nnrt_status_t nnrt_lstm_f32(const nnrt_lstm_f32_params_t *params, const float *input,
                            float *hidden_state, float *cell_state, float *output,
                            void *scratch);

/** The integer LSTMs' parameters (nnrt_lstm_s8, nnrt_lstm_s16), `bias_t` the biases' type. */
#define NNRT_LSTM_INT_FIELDS(bias_t) \
    int32_t batches; \
    int32_t time_steps; \
    int32_t input_size; \
    int32_t state_size; \
    int32_t time_major;        /**< 1: input [time, batches, input] */ \
    int32_t cell_activation;   /**< TFLite's enum: 4 TANH, 6 SIGMOID (the cell gate) */ \
    int32_t input_zero_point;  /**< of x */ \
    int32_t hidden_zero_point; /**< of the hidden state (the recurrent FC's input) */ \
    int32_t input_mult[4];     /**< x * W_in -> Q3.12, per gate {i, f, c, o} */ \
    int32_t input_shift[4]; \
    int32_t recurrent_mult[4]; /**< h * W_rec -> Q3.12 */ \
    int32_t recurrent_shift[4]; \
    int32_t forget_mult;       /**< Q0.15 * cell -> cell (2^-15) */ \
    int32_t forget_shift; \
    int32_t update_mult;       /**< Q0.15 * Q0.15 -> cell (2^-30 / cell scale) */ \
    int32_t update_shift; \
    int32_t hidden_mult;       /**< Q0.15 * Q0.15 -> hidden (2^-30 / hidden scale) */ \
    int32_t hidden_shift; \
    int32_t cell_clip;         /**< quantised, [0, 32767]; 0: no clip */ \
    int32_t cell_tanh_multiplier; /**< tanh of the cell state: nnrt_sigmoid_s16_params_t */ \
    int32_t cell_tanh_shift; \
    const int8_t *w_input[4];  /**< input-to-{input, forget, cell, output} [state, input] */ \
    const int8_t *w_recurrent[4]; /**< recurrent-to-{i, f, c, o} [state, state] */ \
    const bias_t *bias[4];     /**< {i, f, c, o} gate biases [state] */

/**
 * int8 UNIDIRECTIONAL_SEQUENCE_LSTM with an int16 cell state, as TFLM's integer EvalLstm
 * (8-bit activations and weights, 32-bit biases; no peephole, projection or layer norm).
 * Each step, for the gates forget, input, cell: gate = FC(x_t, W_in, bias) + FC(h, W_rec)
 * (each FC: int32 sum of w * (v - zero point), rescaled to an int16 on Q3.12, clamped;
 * the two summed with int16 saturation), then the int16 sigmoid (the cell gate:
 * `cell_activation`), an int16 on Q0.15. Then c = sat16(rescale(f * c) + rescale(i * g))
 * on the cell state's scale, clipped to [-cell_clip, cell_clip] when cell_clip > 0; the
 * output gate likewise; h = clamp8(rescale(tanh(c) * o) + hidden_zero_point), tanh(c)
 * with (cell_tanh_multiplier, cell_tanh_shift) from the cell state's power-of-two scale;
 * output[t] = h. Batch-major input runs batch after batch with its own state row;
 * time-major runs all batches per step. The int8 hidden and int16 cell states
 * [batches, state_size] are variable tensors, updated in place.
 */
typedef struct {
    NNRT_LSTM_INT_FIELDS(int32_t)
} nnrt_lstm_s8_params_t;

/** Scratch bytes of nnrt_lstm_s8: four buffers of batches x state int16 (TFLM's four). */
#define NNRT_LSTM_S8_SCRATCH_BYTES(batches, state) \
    (4u * (size_t)(batches) * (size_t)(state) * sizeof(int16_t))

/**
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or inconsistent parameters.
 */
nnrt_status_t nnrt_lstm_s8(const nnrt_lstm_s8_params_t *params, const int8_t *input,
                           int8_t *hidden_state, int16_t *cell_state, int8_t *output,
                           void *scratch);

/**
 * int16 UNIDIRECTIONAL_SEQUENCE_LSTM, TFLM's 16x8 (EvalLstm<int16_t, int8_t, int16_t,
 * int64_t>): as nnrt_lstm_s8 with int16 input, hidden state and output (the hidden
 * clamped to int16), int64 biases, and each gate FC's sum in 64 bits rescaled with
 * nnrt_multiply_by_quantized_multiplier_s64() (input and recurrent shifts in [-31, 7]).
 * Same scratch as nnrt_lstm_s8 (NNRT_LSTM_S8_SCRATCH_BYTES).
 */
typedef struct {
    NNRT_LSTM_INT_FIELDS(int64_t)
} nnrt_lstm_s16_params_t;

/**
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or inconsistent parameters.
 */
nnrt_status_t nnrt_lstm_s16(const nnrt_lstm_s16_params_t *params, const int16_t *input,
                            int16_t *hidden_state, int16_t *cell_state, int16_t *output,
                            void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_SEQUENCE_H_ */
