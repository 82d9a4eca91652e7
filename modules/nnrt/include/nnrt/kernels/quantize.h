/**
 * @file quantize.h
 * @brief QUANTIZE (float32 -> int8/int16, integer requantisation) and DEQUANTIZE
 *        (int8/int16/uint8 -> float32), bit-exact with TensorFlow Lite Micro.
 *
 * Element-wise over @p size elements, per-tensor quantisation (one scale, one zero
 * point), real = scale * (q - zero_point).
 *
 * Arguments, as in every nnrt kernel: configuration (params struct or scalars) first,
 * then input, output, then the extents.
 *
 * In place: @p output may start at the same address as @p input, also when the element
 * sizes differ (a narrowing conversion walks forward, a widening one backward, so no
 * element is overwritten before it is read). Other overlap is not supported.
 *
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, a negative size or a parameter
 * out of range (nothing is written then); nnrt_requantize() also returns
 * NNRT_ERR_UNSUPPORTED for a type pair it does not implement.
 */
#ifndef NNRT_KERNELS_QUANTIZE_H_
#define NNRT_KERNELS_QUANTIZE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scale and zero point of the quantised side of a (de)quantisation. */
typedef struct {
    float scale;        /**< > 0, finite */
    int32_t zero_point; /**< in the range of the quantised type */
} nnrt_affine_params_t;

/** 1 unless the zero point is in lo..hi (DEQUANTIZE's guard). */
#define NNRT_AFFINE_ZERO_POINT_BAD(params, lo, hi)                                            \
    ((params)->zero_point < (lo) || (params)->zero_point > (hi))
/** 1 unless a positive scale and the zero point in lo..hi (QUANTIZE's guard). */
#define NNRT_QUANTIZE_PARAMS_BAD(params, lo, hi)                                              \
    (!((params)->scale > 0.0f) || NNRT_AFFINE_ZERO_POINT_BAD(params, lo, hi))

/**
 * float32 -> int8: q = clamp(round(x / scale) + zero_point, -128, 127), rounding half
 * away from zero, division in single precision (TFLM AffineQuantize).
 *
 * Quotients beyond the int32 range (+-inf, huge values) and NaN are undefined
 * behaviour in TFLM's C++ (a float -> int32 conversion): its result there depends on
 * the platform (x86-64: -128 for all of them). Here they saturate to -128/127, and NaN
 * gives the zero point.
 */
nnrt_status_t nnrt_quantize_f32_s8(const nnrt_affine_params_t *params, const float *input,
                                   int8_t *output, int32_t size);

/** float32 -> int16, as nnrt_quantize_f32_s8 with the int16 range. */
nnrt_status_t nnrt_quantize_f32_s16(const nnrt_affine_params_t *params, const float *input,
                                    int16_t *output, int32_t size);

/** Integer requantisation: out = clamp(out_zp + (in - in_zp) * in_scale/out_scale). */
typedef struct {
    int32_t input_zero_point;  /**< in the input type's range */
    int32_t output_zero_point; /**< in the output type's range */
    int32_t multiplier;        /**< in_scale/out_scale (double ratio), Q31 >= 0 */
    int32_t shift;             /**< its power of two, [-31, 30] */
} nnrt_requantize_params_t;

/** int8 -> int8 requantisation (TFLM reference_ops::Requantize). */
nnrt_status_t nnrt_requantize_s8(const nnrt_requantize_params_t *params,
                                 const int8_t *input, int8_t *output, int32_t size);

/**
 * Requantisation between other integer types, the pairs TFLM's QUANTIZE supports:
 * int8 -> uint8/int16/int32, uint8 -> int8, int16 -> int8/int16/int32,
 * int32 -> int8/int16 (and int8 -> int8). Element type is read at run time: prefer
 * nnrt_requantize_s8() for int8 -> int8.
 * @return NNRT_ERR_UNSUPPORTED for another pair.
 */
nnrt_status_t nnrt_requantize(const nnrt_requantize_params_t *params, const void *input,
                              nnrt_dtype_t input_type, void *output,
                              nnrt_dtype_t output_type, int32_t size);

/** int8 -> float32: x = scale * (q - zero_point), rounded once to float (TFLM). */
nnrt_status_t nnrt_dequantize_s8_f32(const nnrt_affine_params_t *params,
                                     const int8_t *input, float *output, int32_t size);

/** int16 -> float32, as nnrt_dequantize_s8_f32. */
nnrt_status_t nnrt_dequantize_s16_f32(const nnrt_affine_params_t *params,
                                      const int16_t *input, float *output, int32_t size);

/** uint8 -> float32, as nnrt_dequantize_s8_f32. */
nnrt_status_t nnrt_dequantize_u8_f32(const nnrt_affine_params_t *params,
                                     const uint8_t *input, float *output, int32_t size);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_QUANTIZE_H_ */
