/**
 * @file normalize.h
 * @brief Row-wise normalisations over the last axis: LOG_SOFTMAX and L2_NORMALIZATION
 *        (float32; L2_NORMALIZATION int8 too), as TensorFlow Lite Micro's reference
 *        kernels compute them.
 *
 * The input is @p outer rows of @p depth elements; each row is read whole before any of
 * its outputs is written, so the output may overwrite the input (in place).
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or a non-positive size.
 */
#ifndef NNRT_KERNELS_NORMALIZE_H_
#define NNRT_KERNELS_NORMALIZE_H_

#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = x - max - logf(sum(expf(x - max))) per row (TFLM's reference LogSoftmax). */
nnrt_status_t nnrt_log_softmax_f32(const float *input, float *output, int32_t outer,
                                   int32_t depth);

/** out = x / max(sqrtf(sum(x * x)), 1e-6f) per row (TFLM's L2Normalization). */
nnrt_status_t nnrt_l2_normalization_f32(const float *input, float *output, int32_t outer,
                                        int32_t depth);

/** int8 L2_NORMALIZATION (TFLM's reference_integer_ops::L2Normalization): outputs in
 *  1/128 units with zero point 0, as TFLM writes them. */
nnrt_status_t nnrt_l2_normalization_s8(const int8_t *input, int8_t *output, int32_t outer,
                                       int32_t depth, int32_t input_zero_point);

/** int8 LOG_SOFTMAX parameters (TFLM's PreprocessLogSoftmaxScalingExp, beta 1). */
typedef struct {
    int32_t outer;                   /**< rows, >= 1 */
    int32_t depth;                   /**< elements per row (the last axis), >= 1 */
    int32_t input_multiplier;        /**< Q31 multiplier of s_in * 2^26 */
    int32_t input_left_shift;        /**< its (left) shift, in [0, 31] */
    int32_t reverse_scaling_divisor; /**< Q31 multiplier of the inverse rescaling */
    int32_t reverse_scaling_shift;   /**< its shift, in [-31, 0] */
    int32_t diff_min;                /**< minus TFLM's input radius, <= 0 */
} nnrt_log_softmax_s8_params_t;

/** int8 LOG_SOFTMAX (TFLM's reference LogSoftmaxQuantized): outputs with scale 16/256
 *  and zero point 127, as TFLM requires. In place capable. */
nnrt_status_t nnrt_log_softmax_s8(const nnrt_log_softmax_s8_params_t *params,
                                  const int8_t *input, int8_t *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_NORMALIZE_H_ */
