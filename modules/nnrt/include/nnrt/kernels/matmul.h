/**
 * @file matmul.h
 * @brief BATCH_MATMUL (int8, int16, float32), bit-exact with TensorFlow Lite Micro's
 *        reference BatchMatMul.
 *
 * output[b][i][j] = sum over k (ascending) of lhs[b][i][k] * rhs[b][k][j], for every
 * batch b of up to three broadcast batch dimensions. The adjoint flags (adj_x, adj_y)
 * and broadcasting are folded by nnopt into element strides: lhs[b][i][k] is read at
 * `b . lhs_batch_stride + i * lhs_row_stride + k * lhs_depth_stride`, rhs[b][k][j] at
 * `b . rhs_batch_stride + k * rhs_depth_stride + j * rhs_col_stride` (stride 0 along a
 * broadcast batch dimension). TFLM transposes operands into persistent buffers first;
 * the products and their order of summation are the same, so nnrt reads in place and
 * needs no buffer.
 *
 * int8: (lhs - lhs_zp) * (rhs - rhs_zp) summed in int32, requantised by TFLM's
 * double-rounding MultiplyByQuantizedMultiplier, offset, clamped to int8. int16 (zero
 * points 0): summed in int64 and requantised by TFLM's 64-bit MultiplyByQuantizedMultiplier
 * (the multiplier reduced to 16 bits). The output is dense [batch..., rows, cols].
 * Not in place.
 */
#ifndef NNRT_KERNELS_MATMUL_H_
#define NNRT_KERNELS_MATMUL_H_

#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Shape and element strides of one batch matrix multiplication. */
typedef struct {
    int32_t batch[3];             /**< output batch extents, outermost first, >= 1 */
    int32_t lhs_batch_stride[3];  /**< lhs element stride per batch dim (0: broadcast) */
    int32_t rhs_batch_stride[3];  /**< rhs element stride per batch dim (0: broadcast) */
    int32_t rows;                 /**< output rows, >= 1 */
    int32_t cols;                 /**< output columns, >= 1 */
    int32_t depth;                /**< accumulation depth, >= 1 */
    int32_t lhs_row_stride;       /**< lhs element stride between rows */
    int32_t lhs_depth_stride;     /**< lhs element stride along the depth */
    int32_t rhs_depth_stride;     /**< rhs element stride along the depth */
    int32_t rhs_col_stride;       /**< rhs element stride between columns */
} nnrt_matmul_shape_t;

/** Quantised BATCH_MATMUL (int8 and int16). */
typedef struct {
    nnrt_matmul_shape_t shape;
    int32_t lhs_offset;         /**< -zero_point of lhs (0 for int16) */
    int32_t rhs_offset;         /**< -zero_point of rhs (0 for int16) */
    int32_t output_multiplier;  /**< Q31, of lhs_scale * rhs_scale / out_scale */
    int32_t output_shift;       /**< int8: -31..30; int16: -31..7 */
    int32_t output_offset;      /**< output zero point (0 for int16) */
    int32_t act_min;            /**< the output type's minimum */
    int32_t act_max;            /**< the output type's maximum */
} nnrt_batch_matmul_q_params_t;

/** 1 if the shape is valid: positive extents, non-negative batch strides. */
static inline int nnrt_matmul_shape_ok(const nnrt_matmul_shape_t *s)
{
    for (int d = 0; d < 3; ++d) {
        if (s->batch[d] < 1 || s->lhs_batch_stride[d] < 0 || s->rhs_batch_stride[d] < 0) {
            return 0;
        }
    }
    return s->rows >= 1 && s->cols >= 1 && s->depth >= 1;
}

/** int8 BATCH_MATMUL. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_batch_matmul_s8(const nnrt_batch_matmul_q_params_t *params,
                                   const int8_t *lhs, const int8_t *rhs, int8_t *output);

/** int16 BATCH_MATMUL (64-bit accumulation). @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_batch_matmul_s16(const nnrt_batch_matmul_q_params_t *params,
                                    const int16_t *lhs, const int16_t *rhs, int16_t *output);

/** float32 BATCH_MATMUL. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_batch_matmul_f32(const nnrt_matmul_shape_t *shape, const float *lhs,
                                    const float *rhs, float *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_MATMUL_H_ */
