/**
 * @file fc.h
 * @brief Fully connected layer (FULLY_CONNECTED).
 *
 * Bit-exact with TensorFlow Lite Micro's reference kernels:
 * - int8: for each row b of the flattened input and unit o,
 *   `acc = sum_d (w[o][d] + weights_offset) * (x[b][d] + input_offset)` in int32,
 *   `+ bias[o]` (optional), then nnrt_multiply_by_quantized_multiplier() with the
 *   unit's (per-channel) or the layer's (per-tensor) multiplier and shift,
 *   `+ output_offset`, clamped to [act_min, act_max].
 * - float32: `sum_d x[b][d] * w[o][d]` accumulated in d order from 0.0f, `+ bias[o]`,
 *   clamped to [act_min, act_max] (std::max then std::min, so NaN passes).
 *
 * Layouts: input `[batches, accum_depth]` (any input shape, flattened row-major by the
 * weights' inner dimension as TFLite does), weights `[output_depth, accum_depth]`,
 * output `[batches, output_depth]` (the same bytes whether keep_num_dims is set or not).
 * No scratch memory. Parameters are computed at build time by `nnopt.lowering.fc`.
 * The output must not overlap the input or the weights.
 */
#ifndef NNRT_KERNELS_FC_H_
#define NNRT_KERNELS_FC_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** int8 fully connected parameters. */
typedef struct {
    int32_t batches;            /**< rows of the flattened input, >= 1 */
    int32_t accum_depth;        /**< inputs per row (weights' inner dimension), >= 1 */
    int32_t output_depth;       /**< units, >= 1 */
    int32_t input_offset;       /**< minus the input zero point, in [-127, 128] */
    int32_t weights_offset;     /**< minus the weights zero point (TFLM applies it only
                                     per-tensor; 0 for per-channel), in [-127, 128] */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t act_min;            /**< fused activation lower bound, in [-128, act_max] */
    int32_t act_max;            /**< fused activation upper bound, in [act_min, 127] */
    int32_t per_channel;        /**< 1: multiplier/shift hold output_depth entries; 0: one */
    const int32_t *multiplier;  /**< Q31 multipliers, from quantize_multiplier() */
    const int32_t *shift;       /**< shifts (> 0: left), in [-31, 30] */
} nnrt_fc_s8_params_t;

/** float32 fully connected parameters. */
typedef struct {
    int32_t batches;            /**< rows of the flattened input, >= 1 */
    int32_t accum_depth;        /**< inputs per row, >= 1 */
    int32_t output_depth;       /**< units, >= 1 */
    float act_min;              /**< fused activation lower bound (-FLT_MAX for none) */
    float act_max;              /**< fused activation upper bound (FLT_MAX for none) */
} nnrt_fc_f32_params_t;

/*
 * Argument checks (the kernels' Prepare, in TFLM's terms): the conditions on the
 * parameters under which the fully connected kernels run. The kernels test the same
 * macros on every call, with their data pointers; the model loader calls
 * nnrt_fc_*_check() before it runs one (NNRT_OK or NNRT_ERR_ARG).
 *
 * Naming, as in every nnrt header: a kernel is named for what it does, one per file
 * (nnrt_fully_connected_s8(), as CMSIS-NN's arm_fully_connected_s8()); a check for the
 * parameter struct it validates (nnrt_fc_s8_check() checks an nnrt_fc_s8_params_t, as
 * nnrt_conv_s8_check() checks the nnrt_conv_s8_params_t of every int8 convolution).
 * Generated C calls both names (the kernel in its op function, the check in
 * <model>_prepare()), so neither is renamed.
 */

/** 1 unless positive dims, int8 offsets and activation range, requantisation arrays. */
#define NNRT_FC_S8_PARAMS_BAD(params)                                                       \
    ((params)->multiplier == NULL || (params)->shift == NULL || (params)->batches < 1     \
     || (params)->accum_depth < 1 || (params)->output_depth < 1                             \
     || (params)->act_min < INT8_MIN || (params)->act_max > INT8_MAX                        \
     || (params)->act_min > (params)->act_max || (params)->output_offset < INT8_MIN         \
     || (params)->output_offset > INT8_MAX || (params)->input_offset < -INT8_MAX            \
     || (params)->input_offset > INT8_MAX + 1 || (params)->weights_offset < -INT8_MAX       \
     || (params)->weights_offset > INT8_MAX + 1)

/** 1 unless positive dims and an ordered activation range (float32). */
#define NNRT_FC_F32_PARAMS_BAD(params)                                                      \
    ((params)->batches < 1 || (params)->accum_depth < 1 || (params)->output_depth < 1     \
     || !((params)->act_min <= (params)->act_max))

/** The argument checks of nnrt_fully_connected_s8() / _f32() on @p params alone
 *  (kernels/fc/nnrt_fc_<dtype>_check.c). */
nnrt_status_t nnrt_fc_s8_check(const nnrt_fc_s8_params_t *params);
nnrt_status_t nnrt_fc_f32_check(const nnrt_fc_f32_params_t *params);

/**
 * int8 fully connected: `[batches, accum_depth]` x `[output_depth, accum_depth]`^T
 * -> `[batches, output_depth]`.
 *
 * @param params   sizes, offsets, activation range, requantisation
 * @param input    int8 input, batches * accum_depth elements
 * @param weights  `[output_depth, accum_depth]` int8
 * @param bias     `[output_depth]` int32 or NULL
 * @param output   int8 output, batches * output_depth elements
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_fully_connected_s8(const nnrt_fc_s8_params_t *params, const int8_t *input,
                                      const int8_t *weights, const int32_t *bias,
                                      int8_t *output);

/** float32 fully connected; layouts and errors as nnrt_fully_connected_s8(). */
nnrt_status_t nnrt_fully_connected_f32(const nnrt_fc_f32_params_t *params, const float *input,
                                       const float *weights, const float *bias, float *output);

/**
 * int16 x int8 fully connected parameters (16x8 quantisation: input and output zero
 * points 0).
 */
typedef struct {
    int32_t batches;            /**< rows of the flattened input, >= 1 */
    int32_t accum_depth;        /**< inputs per row, >= 1 */
    int32_t output_depth;       /**< units, >= 1 */
    int32_t weights_offset;     /**< minus the weights zero point (per-tensor weights;
                                     0 per channel), in [-127, 128] */
    int32_t act_min;            /**< fused activation lower bound, in [-32768, act_max] */
    int32_t act_max;            /**< fused activation upper bound, in [act_min, 32767] */
    int32_t per_channel;        /**< 1: multiplier/shift hold output_depth entries; 0: one */
    const int32_t *multiplier;  /**< Q31 multipliers, >= 0 */
    const int32_t *shift;       /**< shifts (> 0: left), in [-31, 7] */
} nnrt_fc_s16_params_t;

/** nnrt_fully_connected_s16()'s argument check on @p params alone
 *  (kernels/fc/nnrt_fc_s16_check.c). */
nnrt_status_t nnrt_fc_s16_check(const nnrt_fc_s16_params_t *params);

/**
 * int16 x int8 fully connected (16x8): bit-exact with TFLM's 16x8 reference
 * FullyConnected with an int64 bias (or none): `acc = sum_d (w[o][d] + weights_offset)
 * * x[b][d]` in 64 bits, `+ bias[o]`, nnrt_multiply_by_quantized_multiplier_s64()
 * (nnrt/kernels/quant.h), clamped to [act_min, act_max]. Layouts as
 * nnrt_fully_connected_s8().
 *
 * @param bias  `[output_depth]` int64 or NULL
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_fully_connected_s16(const nnrt_fc_s16_params_t *params, const int16_t *input,
                                       const int8_t *weights, const int64_t *bias,
                                       int16_t *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_FC_H_ */
