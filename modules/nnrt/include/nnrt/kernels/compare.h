/**
 * @file compare.h
 * @brief Comparisons (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL) with
 *        a bool output, LOGICAL_AND / LOGICAL_OR, and SELECT_V2, all with numpy
 *        broadcasting, as TensorFlow Lite Micro's reference kernels compute them.
 *
 * Binary kernels walk the output in row-major order through the build-time broadcast
 * descriptor of elementwise.h. int8 comparisons rescale both inputs first, as TFLM's
 * ComparisonWithScaling: ((x - zp) << left_shift) times the input's multiplier (its
 * scale as a Q31 multiplier below one), then compare; float32, int32 and bool compare
 * raw values. bool tensors are bytes holding 0 or 1.
 *
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, a bad descriptor or operation.
 */
#ifndef NNRT_KERNELS_COMPARE_H_
#define NNRT_KERNELS_COMPARE_H_

#include <stdbool.h>
#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/kernels/elementwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The comparison a kernel applies. */
typedef enum {
    NNRT_CMP_EQUAL = 0,
    NNRT_CMP_NOT_EQUAL = 1,
    NNRT_CMP_GREATER = 2,
    NNRT_CMP_GREATER_EQUAL = 3,
    NNRT_CMP_LESS = 4,
    NNRT_CMP_LESS_EQUAL = 5,
} nnrt_compare_op_t;

/** float32 / int32 / bool comparison: the broadcast walk and the operation. */
typedef struct {
    nnrt_broadcast_t bcast;
    int32_t op; /**< nnrt_compare_op_t */
} nnrt_compare_params_t;

/** int8 comparison: TFLM's ComparisonParams (left shift 8, per-input rescale). */
typedef struct {
    nnrt_broadcast_t bcast;
    int32_t op; /**< nnrt_compare_op_t */
    int32_t left_shift;
    int32_t input1_offset;     /**< -zero point of input 1 */
    int32_t input1_multiplier; /**< Q31 of input 1's scale (QuantizeMultiplierSmallerThanOneExp) */
    int32_t input1_shift;      /**< <= 0 */
    int32_t input2_offset;
    int32_t input2_multiplier;
    int32_t input2_shift;
} nnrt_compare_s8_params_t;

/** The comparison kernels' guards on their parameters (1: bad): a valid broadcast;
 *  int8 also left shift 0..16 and input shifts -31..0. */
#define NNRT_COMPARE_PARAMS_BAD(params) (!nnrt_broadcast_valid(&(params)->bcast))
#define NNRT_COMPARE_S8_PARAMS_BAD(params)                                                   \
    (!nnrt_broadcast_valid(&(params)->bcast) || (params)->left_shift < 0                    \
     || (params)->left_shift > 16 || (params)->input1_shift > 0 || (params)->input2_shift > 0 \
     || (params)->input1_shift < -31 || (params)->input2_shift < -31)

nnrt_status_t nnrt_compare_f32(const nnrt_compare_params_t *params, const float *input1,
                               const float *input2, bool *output);
nnrt_status_t nnrt_compare_s32(const nnrt_compare_params_t *params, const int32_t *input1,
                               const int32_t *input2, bool *output);
nnrt_status_t nnrt_compare_s64(const nnrt_compare_params_t *params, const int64_t *input1,
                               const int64_t *input2, bool *output);
nnrt_status_t nnrt_compare_b(const nnrt_compare_params_t *params, const bool *input1,
                             const bool *input2, bool *output);
nnrt_status_t nnrt_compare_s8(const nnrt_compare_s8_params_t *params, const int8_t *input1,
                              const int8_t *input2, bool *output);

/** out = in1 && in2 (bool, broadcasting). In place over a same-sized input. */
nnrt_status_t nnrt_logical_and_b(const nnrt_broadcast_t *bcast, const bool *input1,
                                 const bool *input2, bool *output);
/** out = in1 || in2 (bool, broadcasting). In place over a same-sized input. */
nnrt_status_t nnrt_logical_or_b(const nnrt_broadcast_t *bcast, const bool *input1,
                                const bool *input2, bool *output);

/**
 * SELECT_V2: out = cond ? x : y with the three inputs broadcast to the output (TFLM's
 * BroadcastSelect5DSlow), values copied raw (TFLM ignores quantisation). Strides are in
 * elements of each input (0 = broadcast), outermost dimension first.
 */
typedef struct {
    int32_t rank;                   /**< 1..NNRT_MAX_DIMS */
    int32_t dims[NNRT_MAX_DIMS];    /**< output extents, each >= 1 */
    int32_t stride_c[NNRT_MAX_DIMS];
    int32_t stride_x[NNRT_MAX_DIMS];
    int32_t stride_y[NNRT_MAX_DIMS];
    int32_t elem_bytes;             /**< 1, 2 or 4 */
} nnrt_select_params_t;

/** SELECT_V2 of elements of any size. In place over a same-sized x or y. */
nnrt_status_t nnrt_select_x8(const nnrt_select_params_t *params, const bool *cond,
                             const void *x, const void *y, void *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_COMPARE_H_ */
