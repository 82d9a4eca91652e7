/**
 * @file reduce.h
 * @brief REDUCE_MAX, REDUCE_MIN and SUM over any set of axes, as TensorFlow Lite
 *        Micro's reference ReduceGeneric computes them; ARG_MAX and ARG_MIN.
 *
 * The geometry is MEAN's (nnrt_mean_geom_t, pool.h): the output is the row-major walk
 * over the kept dimensions, each output element combines the input elements of the
 * reduced index space in increasing input address order (TFLM's accumulation order,
 * which matters for float sums). REDUCE_MAX/MIN start from the type's lowest/highest
 * value and keep `in > acc ? in : acc` (`in < acc ? in : acc`), as TFLM's lambdas; int8
 * compares raw values (TFLM requires equal input and output quantisation).
 *
 * Not in place. Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or a bad geometry.
 */
#ifndef NNRT_KERNELS_REDUCE_H_
#define NNRT_KERNELS_REDUCE_H_

#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/kernels/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

nnrt_status_t nnrt_reduce_max_s8(const nnrt_mean_geom_t *geom, const int8_t *input,
                                 int8_t *output);
nnrt_status_t nnrt_reduce_max_f32(const nnrt_mean_geom_t *geom, const float *input,
                                  float *output);
nnrt_status_t nnrt_reduce_min_s8(const nnrt_mean_geom_t *geom, const int8_t *input,
                                 int8_t *output);
nnrt_status_t nnrt_reduce_min_f32(const nnrt_mean_geom_t *geom, const float *input,
                                  float *output);
/**
 * REDUCE_ALL over any axes: each output is 1 if every reduced bool element is non-zero,
 * else 0 (TFLM's ReduceAll: logical AND from true). Bools are one byte each.
 */
nnrt_status_t nnrt_reduce_all_b8(const nnrt_mean_geom_t *geom, const uint8_t *input,
                                 uint8_t *output);
/** float32 SUM: 0.0f plus the reduced elements in increasing address order. */
nnrt_status_t nnrt_sum_f32(const nnrt_mean_geom_t *geom, const float *input, float *output);

/**
 * ARG_MAX / ARG_MIN along one axis: the input as [outer, axis_size, inner]; for each
 * (outer, inner) the index of the first element that no later one beats with `>` (`<`
 * for ARG_MIN), as TFLM's reference ArgMinMax with GreaterFn / LessFn. int32 indices.
 */
typedef struct {
    int32_t outer;     /**< product of the dimensions before the axis, >= 1 */
    int32_t axis_size; /**< >= 1 */
    int32_t inner;     /**< product of the dimensions after the axis, >= 1 */
} nnrt_arg_params_t;

/** 1 unless every extent of the ARG_MAX / ARG_MIN view is >= 1 (the kernels' guard). */
#define NNRT_ARG_PARAMS_BAD(params)                                                          \
    ((params)->outer < 1 || (params)->axis_size < 1 || (params)->inner < 1)

nnrt_status_t nnrt_arg_max_s8(const nnrt_arg_params_t *params, const int8_t *input,
                              int32_t *output);
nnrt_status_t nnrt_arg_max_f32(const nnrt_arg_params_t *params, const float *input,
                               int32_t *output);
nnrt_status_t nnrt_arg_min_s8(const nnrt_arg_params_t *params, const int8_t *input,
                              int32_t *output);
nnrt_status_t nnrt_arg_min_f32(const nnrt_arg_params_t *params, const float *input,
                               int32_t *output);

/** CUMSUM along one axis: the input as [before, depth, after] (TFLM's reference CumSum). */
typedef struct {
    int32_t before;    /**< product of the dimensions before the axis, >= 1 */
    int32_t depth;     /**< the axis' extent, >= 1 */
    int32_t after;     /**< product of the dimensions after the axis, >= 1 */
    int32_t exclusive; /**< 1: each output holds the sum of the elements before it */
    int32_t reverse;   /**< 1: accumulate from the end of the axis */
} nnrt_cumsum_params_t;

/** float32 CUMSUM, accumulated from 0.0f in axis order. In place capable. */
nnrt_status_t nnrt_cumsum_f32(const nnrt_cumsum_params_t *params, const float *input,
                              float *output);

/** int8 CUMSUM: the geometry and TFLM's rescaling (an ADD-style left shift of 20). */
typedef struct {
    nnrt_cumsum_params_t geom;
    int32_t left_shift;         /**< TFLM's kCumSumIntegerShift (20), in [0, 22] */
    int32_t input_offset;       /**< minus the input zero point, in [-127, 128] */
    int32_t input_multiplier;   /**< Q31 multiplier of 1/2 */
    int32_t input_shift;        /**< its shift, <= 0 */
    int32_t output_offset;      /**< output zero point */
    int32_t output_multiplier;  /**< Q31 multiplier of 2 s_in / (2^left_shift s_out) */
    int32_t output_shift;       /**< its shift, <= 0 */
    int32_t act_min;            /**< -128 (CUMSUM has no fused activation) */
    int32_t act_max;            /**< 127 */
} nnrt_cumsum_s8_params_t;

/** int8 CUMSUM (TFLM's reference quantized CumSum); layouts as nnrt_cumsum_f32(). In
 * place capable. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_cumsum_s8(const nnrt_cumsum_s8_params_t *params, const int8_t *input,
                             int8_t *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_REDUCE_H_ */
