/**
 * @file elementwise.h
 * @brief Element-wise binary operators with broadcasting: ADD, SUB, MUL, MAXIMUM,
 *        MINIMUM, SQUARED_DIFFERENCE (int8 and float32).
 *
 * Bit-exact with TensorFlow Lite Micro's reference kernels:
 * - int8 ADD/SUB: both inputs are offset, shifted left by `left_shift` (20), scaled by
 *   their own multiplier, added (subtracted), rescaled by the output multiplier, offset,
 *   clamped (TFLM's double-rounding MultiplyByQuantizedMultiplier throughout);
 * - int8 MUL: (in1 - zp1) * (in2 - zp2) requantised by one multiplier;
 * - int8 MAXIMUM/MINIMUM compare the raw int8 values (TFLM ignores the quantisation);
 * - int8 SQUARED_DIFFERENCE: ADD's input rescaling with left_shift 7, the difference
 *   squared in int32 and rescaled by the output multiplier (which may exceed 1); int16
 *   the same with left_shift 0 and zero points 0; int32 the plain square, wrapping;
 * - float32: the plain operation, then min(max(x, act_min), act_max).
 *
 * Broadcasting follows numpy/TFLite rules and is encoded at build time as a strided
 * index space (nnrt_broadcast_t): the output is walked in row-major order and each input
 * is addressed through its own strides, 0 along broadcast dimensions. Any rank up to
 * NNRT_MAX_DIMS after merging adjacent dimensions (nnopt merges them, so any TFLite
 * shape pair fits).
 *
 * In place: every kernel here may write its output over an input of the same number of
 * elements (output == input1 or output == input2): output element i is written only
 * after the input elements it depends on were read, and no later element reads it.
 * Inputs that are broadcast (fewer elements than the output) must not alias the output.
 */
#ifndef NNRT_KERNELS_ELEMENTWISE_H_
#define NNRT_KERNELS_ELEMENTWISE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A broadcast of two inputs to an output shape, as strided index spaces. */
typedef struct {
    int32_t rank;                    /**< 1..NNRT_MAX_DIMS */
    int32_t dims[NNRT_MAX_DIMS];     /**< output extents, outermost first, each >= 1 */
    int32_t stride1[NNRT_MAX_DIMS];  /**< input1 element stride per output dim (0 = broadcast) */
    int32_t stride2[NNRT_MAX_DIMS];  /**< input2 element stride per output dim (0 = broadcast) */
} nnrt_broadcast_t;

/**
 * Validate a broadcast descriptor: rank in range, positive extents, non-negative
 * strides. Used by the kernels' argument checks.
 */
static inline int nnrt_broadcast_valid(const nnrt_broadcast_t *b)
{
    if (b->rank < 1 || b->rank > NNRT_MAX_DIMS) {
        return 0;
    }
    for (int32_t d = 0; d < b->rank; ++d) {
        if (b->dims[d] < 1 || b->stride1[d] < 0 || b->stride2[d] < 0) {
            return 0;
        }
    }
    return 1;
}

/**
 * Advance the outer (all but the innermost) dimensions of a broadcast walk by one row.
 * `idx` holds rank-1 counters (start at 0), `off1`/`off2` the input offsets of the row.
 * @return 0 when the walk is complete, 1 otherwise.
 */
static inline int nnrt_broadcast_next_row(const nnrt_broadcast_t *b, int32_t *idx,
                                          ptrdiff_t *off1, ptrdiff_t *off2)
{
    for (int32_t d = b->rank - 2; d >= 0; --d) {
        *off1 += b->stride1[d];
        *off2 += b->stride2[d];
        if (++idx[d] < b->dims[d]) {
            return 1;
        }
        *off1 -= (ptrdiff_t)b->stride1[d] * b->dims[d];
        *off2 -= (ptrdiff_t)b->stride2[d] * b->dims[d];
        idx[d] = 0;
    }
    return 0;
}

/** int8 ADD and SUB (TFLM's left_shift scheme with one multiplier per input). */
typedef struct {
    nnrt_broadcast_t bcast;
    int32_t input1_offset;      /**< -zero_point of input1, in [-127, 128] */
    int32_t input2_offset;      /**< -zero_point of input2, in [-127, 128] */
    int32_t left_shift;         /**< 20 for int8 */
    int32_t input1_multiplier;  /**< Q31, of scale1 / (2 * max(scale1, scale2)) */
    int32_t input1_shift;       /**< <= 0 */
    int32_t input2_multiplier;  /**< Q31, of scale2 / (2 * max(scale1, scale2)) */
    int32_t input2_shift;       /**< <= 0 */
    int32_t output_multiplier;  /**< Q31, of 2 * max_scale / (2^left_shift * out_scale) */
    int32_t output_shift;       /**< <= 0 */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t act_min;            /**< in [-128, act_max] */
    int32_t act_max;            /**< in [act_min, 127] */
} nnrt_add_s8_params_t;

/** int8 MUL: one requantisation of the product of the offset inputs. */
typedef struct {
    nnrt_broadcast_t bcast;
    int32_t input1_offset;      /**< -zero_point of input1, in [-127, 128] */
    int32_t input2_offset;      /**< -zero_point of input2, in [-127, 128] */
    int32_t output_multiplier;  /**< Q31, of scale1 * scale2 / out_scale */
    int32_t output_shift;       /**< in [-31, 30] */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t act_min;            /**< in [-128, act_max] */
    int32_t act_max;            /**< in [act_min, 127] */
} nnrt_mul_s8_params_t;

/** int32 ADD/MUL (and DIV, math.h): broadcast and TFLM's int32 activation range
 *  (CalculateActivationRange<int32_t>: INT32_MIN..INT32_MAX for none). */
typedef struct {
    nnrt_broadcast_t bcast;
    int32_t act_min;
    int32_t act_max;            /**< >= act_min */
} nnrt_binary_s32_params_t;

/** float32 ADD/SUB/MUL: broadcast and fused activation range. */
typedef struct {
    nnrt_broadcast_t bcast;
    float act_min;              /**< -FLT_MAX for none */
    float act_max;              /**< FLT_MAX for none */
} nnrt_binary_f32_params_t;

/*
 * Argument checks (the kernels' Prepare, in TFLM's terms): the conditions on the
 * parameters under which a kernel runs. nnrt_<kernel>_check() returns NNRT_OK or
 * NNRT_ERR_ARG; the model loader (src/loader/) calls it before it calls the kernel.
 * The kernel itself tests, on every call, its data pointers and the same predicate
 * (nnrt_<kernel>_params_ok() or NNRT_<KERNEL>_PARAMS_BAD(): inline, so the kernel's
 * copy compiles to the comparisons written out).
 */

/** nnrt_add_s8() / nnrt_sub_s8(): 1 unless left shift 0..24, rescaling shifts -31..0
 *  and an int8 activation range (a macro: in the kernel, its original comparisons). */
#define NNRT_ADD_S8_PARAMS_BAD(params)                                                      \
    (!nnrt_broadcast_valid(&(params)->bcast)                                                \
     || (params)->left_shift < 0 || (params)->left_shift > 24                               \
     || (params)->input1_shift > 0 || (params)->input1_shift < -31                          \
     || (params)->input2_shift > 0 || (params)->input2_shift < -31                          \
     || (params)->output_shift > 0 || (params)->output_shift < -31                          \
     || (params)->act_min > (params)->act_max || (params)->act_min < INT8_MIN               \
     || (params)->act_max > INT8_MAX)

/** nnrt_add_s16() / nnrt_sub_s16(): as int8 with left shift 15 (TFLM's int16 scheme),
 *  zero points of int16 and an int16 activation range. */
#define NNRT_ADD_S16_PARAMS_BAD(params)                                                     \
    (!nnrt_broadcast_valid(&(params)->bcast) || (params)->left_shift != 15                  \
     || (params)->input1_offset < -INT16_MAX || (params)->input1_offset > -INT16_MIN        \
     || (params)->input2_offset < -INT16_MAX || (params)->input2_offset > -INT16_MIN        \
     || (params)->input1_shift > 0 || (params)->input1_shift < -31                          \
     || (params)->input2_shift > 0 || (params)->input2_shift < -31                          \
     || (params)->output_shift > 0 || (params)->output_shift < -31                          \
     || (params)->act_min > (params)->act_max || (params)->act_min < INT16_MIN              \
     || (params)->act_max > INT16_MAX)

/** nnrt_squared_difference_s8(): as ADD but the output multiplier may be above 1
 *  (output shift -31..30). */
#define NNRT_SQUARED_DIFFERENCE_S8_PARAMS_BAD(params)                                       \
    (!nnrt_broadcast_valid(&(params)->bcast)                                                \
     || (params)->left_shift < 0 || (params)->left_shift > 7                                \
     || (params)->input1_shift > 0 || (params)->input1_shift < -31                          \
     || (params)->input2_shift > 0 || (params)->input2_shift < -31                          \
     || (params)->output_shift > 30 || (params)->output_shift < -31                         \
     || (params)->act_min > (params)->act_max || (params)->act_min < INT8_MIN               \
     || (params)->act_max > INT8_MAX)

/** nnrt_squared_difference_s16(): zero offsets and left shift, input shifts -31..0,
 *  output shift -31..30 and an int16 activation range. */
#define NNRT_SQUARED_DIFFERENCE_S16_PARAMS_BAD(params)                                      \
    (!nnrt_broadcast_valid(&(params)->bcast) || (params)->left_shift != 0                   \
     || (params)->input1_offset != 0 || (params)->input2_offset != 0                        \
     || (params)->output_offset != 0 || (params)->input1_shift > 0                          \
     || (params)->input1_shift < -31 || (params)->input2_shift > 0                          \
     || (params)->input2_shift < -31 || (params)->output_shift > 30                         \
     || (params)->output_shift < -31 || (params)->act_min > (params)->act_max               \
     || (params)->act_min < INT16_MIN || (params)->act_max > INT16_MAX)

/** nnrt_mul_s8(): 1 unless output shift -31..30 and an int8 activation range. */
#define NNRT_MUL_S8_PARAMS_BAD(params)                                                      \
    (!nnrt_broadcast_valid(&(params)->bcast)                                                \
     || (params)->output_shift > 30 || (params)->output_shift < -31                         \
     || (params)->act_min > (params)->act_max || (params)->act_min < INT8_MIN               \
     || (params)->act_max > INT8_MAX)

/** nnrt_mul_s16(): zero offsets (TFLM's int16 MUL), output shift -31..30 and an int16
 *  activation range. */
#define NNRT_MUL_S16_PARAMS_BAD(params)                                                     \
    (!nnrt_broadcast_valid(&(params)->bcast) || (params)->input1_offset != 0                \
     || (params)->input2_offset != 0 || (params)->output_offset != 0                        \
     || (params)->output_shift > 30 || (params)->output_shift < -31                         \
     || (params)->act_min > (params)->act_max || (params)->act_min < INT16_MIN              \
     || (params)->act_max > INT16_MAX)

/** nnrt_add_f32() / nnrt_sub_f32() / nnrt_mul_f32(): a valid broadcast. */
static inline int nnrt_binary_f32_params_ok(const nnrt_binary_f32_params_t *params)
{
    return nnrt_broadcast_valid(&params->bcast);
}

/** nnrt_add_s32() / nnrt_mul_s32() / nnrt_div_s32(): a valid broadcast and range. */
#define NNRT_BINARY_S32_PARAMS_BAD(params)                                                  \
    (!nnrt_broadcast_valid(&(params)->bcast) || (params)->act_min > (params)->act_max)

/** The checks as status codes (NULL parameters: NNRT_ERR_ARG), each in its own file
 *  (kernels/elementwise/nnrt_<name>_check.c). */
nnrt_status_t nnrt_broadcast_check(const nnrt_broadcast_t *bcast);
nnrt_status_t nnrt_add_s8_check(const nnrt_add_s8_params_t *params);
nnrt_status_t nnrt_mul_s8_check(const nnrt_mul_s8_params_t *params);
nnrt_status_t nnrt_add_s16_check(const nnrt_add_s8_params_t *params);
nnrt_status_t nnrt_mul_s16_check(const nnrt_mul_s8_params_t *params);
nnrt_status_t nnrt_binary_s32_check(const nnrt_binary_s32_params_t *params);
nnrt_status_t nnrt_binary_f32_check(const nnrt_binary_f32_params_t *params);

/** out = clamp(requant(in1) + requant(in2)). In-place capable. @return NNRT_OK / NNRT_ERR_ARG */
nnrt_status_t nnrt_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output);

/** out = clamp(requant(in1) - requant(in2)). In-place capable. */
nnrt_status_t nnrt_sub_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output);

/** out = clamp(requant((in1 - zp1) * (in2 - zp2))). In-place capable. */
nnrt_status_t nnrt_mul_s8(const nnrt_mul_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output);

/** int16 ADD / SUB / MUL (TFLM's int16 reference arithmetic: the int8 parameter
 *  structs with int16 ranges; MUL with zero points 0). In-place capable. */
nnrt_status_t nnrt_add_s16(const nnrt_add_s8_params_t *params, const int16_t *input1,
                           const int16_t *input2, int16_t *output);
nnrt_status_t nnrt_sub_s16(const nnrt_add_s8_params_t *params, const int16_t *input1,
                           const int16_t *input2, int16_t *output);
nnrt_status_t nnrt_mul_s16(const nnrt_mul_s8_params_t *params, const int16_t *input1,
                           const int16_t *input2, int16_t *output);

/** int32 (TFLM's int32 reference Add): out = clamp(in1 + in2), the sum wrapping as two's
 *  complement. In-place capable. */
nnrt_status_t nnrt_add_s32(const nnrt_binary_s32_params_t *params, const int32_t *input1,
                           const int32_t *input2, int32_t *output);

/** int32 (TFLM's int32 reference Mul): out = clamp(in1 * in2), the product wrapping as
 *  two's complement. In-place capable. */
nnrt_status_t nnrt_mul_s32(const nnrt_binary_s32_params_t *params, const int32_t *input1,
                           const int32_t *input2, int32_t *output);

/** out = in1 > in2 ? in1 : in2 on the raw int8 values. In-place capable. */
nnrt_status_t nnrt_maximum_s8(const nnrt_broadcast_t *bcast, const int8_t *input1,
                              const int8_t *input2, int8_t *output);

/** out = in1 < in2 ? in1 : in2 on the raw int8 values. In-place capable. */
nnrt_status_t nnrt_minimum_s8(const nnrt_broadcast_t *bcast, const int8_t *input1,
                              const int8_t *input2, int8_t *output);

/** MAXIMUM / MINIMUM on raw int16, int32 and int64 values (TFLM's maximum_minimum.cc).
 *  In-place capable. */
nnrt_status_t nnrt_maximum_s16(const nnrt_broadcast_t *bcast, const int16_t *input1,
                               const int16_t *input2, int16_t *output);
nnrt_status_t nnrt_minimum_s16(const nnrt_broadcast_t *bcast, const int16_t *input1,
                               const int16_t *input2, int16_t *output);
nnrt_status_t nnrt_maximum_s32(const nnrt_broadcast_t *bcast, const int32_t *input1,
                               const int32_t *input2, int32_t *output);
nnrt_status_t nnrt_minimum_s32(const nnrt_broadcast_t *bcast, const int32_t *input1,
                               const int32_t *input2, int32_t *output);
nnrt_status_t nnrt_maximum_s64(const nnrt_broadcast_t *bcast, const int64_t *input1,
                               const int64_t *input2, int64_t *output);
nnrt_status_t nnrt_minimum_s64(const nnrt_broadcast_t *bcast, const int64_t *input1,
                               const int64_t *input2, int64_t *output);

/** d = requant(in1) - requant(in2); out = clamp(requant(d * d)). In-place capable. */
nnrt_status_t nnrt_squared_difference_s8(const nnrt_add_s8_params_t *params,
                                         const int8_t *input1, const int8_t *input2,
                                         int8_t *output);

/** int16 (zero points 0, left_shift 0; the int8 parameter struct with an int16
 *  activation range). In-place capable. */
nnrt_status_t nnrt_squared_difference_s16(const nnrt_add_s8_params_t *params,
                                          const int16_t *input1, const int16_t *input2,
                                          int16_t *output);

/** int32: (in1 - in2)^2 wrapping as two's complement. In-place capable. */
nnrt_status_t nnrt_squared_difference_s32(const nnrt_broadcast_t *bcast, const int32_t *input1,
                                          const int32_t *input2, int32_t *output);

/** out = (in1 - in2) * (in1 - in2). In-place capable. */
nnrt_status_t nnrt_squared_difference_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                          const float *input2, float *output);

/** out = act(in1 + in2). In-place capable. */
nnrt_status_t nnrt_add_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output);

/** out = act(in1 - in2). In-place capable. */
nnrt_status_t nnrt_sub_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output);

/** out = act(in1 * in2). In-place capable. */
nnrt_status_t nnrt_mul_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output);

/** out = in1 > in2 ? in1 : in2 (a NaN operand yields input2, as TFLM). In-place capable. */
nnrt_status_t nnrt_maximum_f32(const nnrt_broadcast_t *bcast, const float *input1,
                               const float *input2, float *output);

/** out = in1 < in2 ? in1 : in2 (a NaN operand yields input2, as TFLM). In-place capable. */
nnrt_status_t nnrt_minimum_f32(const nnrt_broadcast_t *bcast, const float *input1,
                               const float *input2, float *output);

/** int8 ADD_N parameters (TFLM's add_n.cc Prepare: left shift 20, multipliers below 1). */
typedef struct {
    int32_t input_offset;      /**< -zero point shared by the inputs */
    int32_t output_offset;     /**< output zero point */
    int32_t left_shift;        /**< 20 */
    int32_t input_multiplier;  /**< Q31 of s_in / (2 s_in) */
    int32_t input_shift;       /**< <= 0 */
    int32_t output_multiplier; /**< Q31 of 2 s_in / (2^20 s_out) */
    int32_t output_shift;      /**< <= 0 */
    int32_t act_min;
    int32_t act_max;
} nnrt_add_n_s8_params_t;

/** float32 ADD_N over @p num_inputs same-shaped inputs of @p size elements. In place. */
nnrt_status_t nnrt_add_n_f32(const float *const *inputs, int32_t num_inputs, float *output,
                             int32_t size);
/** int8 ADD_N (TFLM's reference AddN with ArithmeticParams). In place. */
nnrt_status_t nnrt_add_n_s8(const nnrt_add_n_s8_params_t *params, const int8_t *const *inputs,
                            int32_t num_inputs, int8_t *output, int32_t size);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_ELEMENTWISE_H_ */
