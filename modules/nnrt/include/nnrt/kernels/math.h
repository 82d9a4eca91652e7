/**
 * @file math.h
 * @brief float32 element-wise math: EXP, LOG, SQRT, RSQRT, ABS, NEG, FLOOR, CEIL, ROUND,
 *        SIN, COS, SQUARE, bool LOGICAL_NOT (unary) and DIV
 *        (binary, broadcasting), as TensorFlow Lite Micro's reference kernels compute
 *        them (std::exp, std::log, std::sqrt, 1 / std::sqrt, std::abs, -x, x1 / x2).
 *
 * Unary kernels are element-wise over a flat array of @p size elements and work in
 * place (@p output may equal @p input). DIV walks the output through the build-time
 * broadcast descriptor of elementwise.h, with the fused activation clamp.
 *
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or a negative size.
 */
#ifndef NNRT_KERNELS_MATH_H_
#define NNRT_KERNELS_MATH_H_

#include <stdbool.h>
#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/kernels/elementwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[i] = expf(in[i]). In-place capable. */
nnrt_status_t nnrt_exp_f32(const float *input, float *output, int32_t size);
/** out[i] = logf(in[i]). In-place capable. */
nnrt_status_t nnrt_log_f32(const float *input, float *output, int32_t size);
/** out[i] = sqrtf(in[i]). In-place capable. */
nnrt_status_t nnrt_sqrt_f32(const float *input, float *output, int32_t size);
/** out[i] = 1.0f / sqrtf(in[i]). In-place capable. */
nnrt_status_t nnrt_rsqrt_f32(const float *input, float *output, int32_t size);

/** out[i] = fabsf(in[i]). In-place capable. */
nnrt_status_t nnrt_abs_f32(const float *input, float *output, int32_t size);
/** out[i] = -in[i]. In-place capable. */
nnrt_status_t nnrt_neg_f32(const float *input, float *output, int32_t size);

/** out[i] = floorf(in[i]). In-place capable. */
nnrt_status_t nnrt_floor_f32(const float *input, float *output, int32_t size);
/** out[i] = ceilf(in[i]). In-place capable. */
nnrt_status_t nnrt_ceil_f32(const float *input, float *output, int32_t size);
/** out[i] = in[i] rounded half to even (TFLM's RoundToNearest). In-place capable. */
nnrt_status_t nnrt_round_f32(const float *input, float *output, int32_t size);
/** out[i] = sinf(in[i]). In-place capable. */
nnrt_status_t nnrt_sin_f32(const float *input, float *output, int32_t size);
/** out[i] = cosf(in[i]). In-place capable. */
nnrt_status_t nnrt_cos_f32(const float *input, float *output, int32_t size);
/** out[i] = in[i] * in[i]. In-place capable. */
nnrt_status_t nnrt_square_f32(const float *input, float *output, int32_t size);
/** out[i] = !in[i] (bool). In-place capable. */
nnrt_status_t nnrt_logical_not_b(const bool *input, bool *output, int32_t size);

/** CAST (TFLM's static_cast per element) from int8, int16, int32, uint32, float32 or bool
 *  to int8, int16, int32, uint32 or float32; and at a model's boundary int64 -> int32 and
 *  float64 -> float32 checked (NNRT_ERR_ARG when a value does not fit), int32 -> int64
 *  and float32 -> float64. In place over an input of the same element size. */
nnrt_status_t nnrt_cast(nnrt_dtype_t from, nnrt_dtype_t to, const void *input, void *output,
                        int32_t size);

/** out = (float)floor((double)in1 / (double)in2), broadcasting (TFLM's FloorDiv);
 *  NNRT_ERR_ARG if any of the @p input2_size divisor elements is zero. In place. */
nnrt_status_t nnrt_floor_div_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                 const float *input2, int32_t input2_size, float *output);
/** out = TFLM's FloorMod (fmodf, moved to the divisor's sign), broadcasting. In place. */
nnrt_status_t nnrt_floor_mod_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                 const float *input2, float *output);

/** int16 ABS parameters (TFLM's PrepareAbsRsqrt). */
typedef struct {
    int32_t input_offset;  /**< input zero point (0) */
    int32_t output_offset; /**< output zero point (0) */
    int32_t rescale;       /**< 1 when the scales differ */
    int32_t multiplier;    /**< Q31 of (float)(s_in / s_out) */
    int32_t shift;
    int32_t saturate;      /**< 1 when quantised (clamp), 0 for raw values (wrap) */
} nnrt_abs_s16_params_t;

/** int16 ABS (quantised or not: without quantisation all fields are 0). In place. The
 *  int8 ABS is a 256-entry table (nnrt_table_lookup_s8) built at compile time. */
nnrt_status_t nnrt_abs_s16(const nnrt_abs_s16_params_t *params, const int16_t *input,
                           int16_t *output, int32_t size);

/** int8 RSQRT through @p table (indexed by the input byte as unsigned); NNRT_ERR_ARG
 *  for an input below @p input_zero_point, as TFLM. In place. */
nnrt_status_t nnrt_rsqrt_s8(const int8_t *table, int32_t input_zero_point,
                            const int8_t *input, int8_t *output, int32_t size);

/** int8 DIV, TFLM's reference DivElementwise: the offset divisor's Q31 reciprocal, the
 *  dividend normalised by its headroom, one requantisation (the int8 MUL parameter
 *  struct, multiplier of s1 / (s2 * s_out)); a divisor equal to its zero point gives
 *  the output zero point (TFLM: undefined). In-place capable. */
nnrt_status_t nnrt_div_s8(const nnrt_mul_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output);

/** nnrt_div_s8(): 1 unless an output shift in [-31, 21] (the total shift then stays a
 *  right shift: the dividend's headroom is at least 22) and an int8 activation range. */
#define NNRT_DIV_S8_PARAMS_BAD(params)                                                      \
    (NNRT_MUL_S8_PARAMS_BAD(params) || (params)->output_shift > 21)
/** nnrt_div_s8()'s argument check (kernels/math/nnrt_div_s8_check.c). */
nnrt_status_t nnrt_div_s8_check(const nnrt_mul_s8_params_t *params);

/** int32 DIV: out = clamp(in1 / in2) truncated toward zero (C and TFLM); a zero divisor
 *  gives 0 and INT32_MIN / -1 gives INT32_MIN (TFLM: undefined). In-place capable. */
nnrt_status_t nnrt_div_s32(const nnrt_binary_s32_params_t *params, const int32_t *input1,
                           const int32_t *input2, int32_t *output);

/** out = act(in1 / in2). In-place capable (see elementwise.h). */
nnrt_status_t nnrt_div_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_MATH_H_ */
