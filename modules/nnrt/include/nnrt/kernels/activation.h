/**
 * @file activation.h
 * @brief Element-wise activations: RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH,
 *        int8 and float32, bit-exact with TensorFlow Lite Micro's reference kernels.
 *
 * Every kernel here is element-wise over a flat array of @p size elements (any shape:
 * activations do not care about `[N,H,W,C]`), and every kernel works in place: @p output
 * may equal @p input (element i is read before element i is written, nothing else is
 * touched). Partial overlap other than exact equality is not supported.
 *
 * Arguments, as in every nnrt kernel: configuration (params struct or scalars) first,
 * then input, output, then the extents.
 *
 * All parameters are computed by the compiler (scripts/nnopt/lowering/activation.py)
 * with TFLM's Prepare-time formulas; the kernels only do the per-element arithmetic.
 * A multiplier/shift pair encodes real = multiplier * 2^shift / 2^31 (see
 * nnopt.multiplier.quantize_multiplier and quant.h).
 *
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, a negative size or a parameter
 * outside its documented range (nothing is written then).
 */
#ifndef NNRT_KERNELS_ACTIVATION_H_
#define NNRT_KERNELS_ACTIVATION_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/kernels/elementwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* RELU / RELU6                                                                          */
/* ------------------------------------------------------------------------------------ */

/** RELU int8 with requantisation from the input's to the output's scale/zero point. */
typedef struct {
    int32_t input_zero_point;  /**< [-128, 127] */
    int32_t output_zero_point; /**< [-128, 127] */
    int32_t multiplier;        /**< in_scale/out_scale, Q31 in [2^30, 2^31) (or 0) */
    int32_t shift;             /**< its power of two, [-31, 30] */
    int32_t act_min;           /**< output clamp: max(-128, output_zero_point) */
    int32_t act_max;           /**< output clamp: 127 */
} nnrt_relu_s8_params_t;

/**
 * out = clamp(out_zp + (in - in_zp) * in_scale/out_scale, act_min, act_max).
 * @param input  [size] int8
 * @param output [size] int8, may equal @p input
 * @param size   number of elements, >= 0
 * @param params see nnrt_relu_s8_params_t; act_min <= act_max, both in [-128, 127]
 */
nnrt_status_t nnrt_relu_s8(const nnrt_relu_s8_params_t *params, const int8_t *input,
                           int8_t *output, int32_t size);

/**
 * out = min(max(in, lo), hi), all in the input's quantisation. TFLM's int8 RELU6 is
 * exactly this (lo = input zero point, hi = quantised 6.0, no requantisation), and so
 * is RELU when input and output quantisation are equal (lo = zero point, hi = 127).
 * @param lo,hi [-128, 127], lo <= hi
 */
nnrt_status_t nnrt_clamp_s8(int32_t lo, int32_t hi, const int8_t *input, int8_t *output,
                            int32_t size);

/** int16 RELU6 (TFLM's Relu6Quantized<int16_t>): out = clamp(in, lo, hi). In place. */
nnrt_status_t nnrt_clamp_s16(int32_t lo, int32_t hi, const int16_t *input, int16_t *output,
                             int32_t size);

/** out = in < 0 ? 0 : in (NaN and -0.0 pass through, as in TFLM). */
nnrt_status_t nnrt_relu_f32(const float *input, float *output, int32_t size);

/** out = in > 6 ? 6 : (in < 0 ? 0 : in). */
nnrt_status_t nnrt_relu6_f32(const float *input, float *output, int32_t size);

/*
 * Argument checks (the kernels' Prepare, in TFLM's terms) of the activations the model
 * loader runs: the conditions on the scalars that the kernels also test on every call.
 * NNRT_OK or NNRT_ERR_ARG.
 */

/** nnrt_clamp_s8(): size >= 0, -128 <= lo <= hi <= 127. */
nnrt_status_t nnrt_clamp_s8_check(int32_t lo, int32_t hi, int32_t size);

/** 1 unless size >= 0 and INT8_MIN <= lo <= hi <= INT8_MAX (nnrt_clamp_s8() and its
 *  check). */
#define NNRT_CLAMP_S8_ARGS_BAD(lo, hi, size)                                                 \
    ((size) < 0 || (lo) < INT8_MIN || (hi) > INT8_MAX || (lo) > (hi))

/** nnrt_clamp_s16(): size >= 0, INT16_MIN <= lo <= hi <= INT16_MAX. */
nnrt_status_t nnrt_clamp_s16_check(int32_t lo, int32_t hi, int32_t size);

/** 1 unless size >= 0 and INT16_MIN <= lo <= hi <= INT16_MAX. */
#define NNRT_CLAMP_S16_ARGS_BAD(lo, hi, size)                                                \
    ((size) < 0 || (lo) < INT16_MIN || (hi) > INT16_MAX || (lo) > (hi))

/** nnrt_table_lookup_s8(): size >= 0. */
nnrt_status_t nnrt_table_lookup_s8_check(int32_t size);

/** 1 unless a valid element count (size >= 0): the condition of
 *  nnrt_unary_f32_check() and of the kernels themselves (kernels/internal/unary.h). */
#define NNRT_UNARY_F32_SIZE_BAD(size) ((size) < 0)

/** The float32 element-wise kernels (RELU, RELU6, LOGISTIC, TANH, HARD_SWISH, ELU and
 *  the math.h unary ones): size >= 0. */
nnrt_status_t nnrt_unary_f32_check(int32_t size);

/* ------------------------------------------------------------------------------------ */
/* LEAKY_RELU                                                                            */
/* ------------------------------------------------------------------------------------ */

/** LEAKY_RELU int8: one multiplier for x >= 0 (identity), one for x < 0 (alpha). */
typedef struct {
    int32_t input_zero_point;    /**< [-128, 127] */
    int32_t output_zero_point;   /**< [-128, 127] */
    int32_t identity_multiplier; /**< in_scale/out_scale, Q31 >= 0 */
    int32_t identity_shift;      /**< [-31, 30] */
    int32_t alpha_multiplier;    /**< |in_scale*alpha/out_scale|, Q31 >= 0 */
    int32_t alpha_shift;         /**< [-31, 30] */
    int32_t alpha_negative;      /**< 1 if alpha < 0 (the alpha product is negated) */
} nnrt_leaky_relu_s8_params_t;

/** out = clamp(out_zp + (x >= 0 ? x*identity : x*alpha)), x = in - in_zp. */
nnrt_status_t nnrt_leaky_relu_s8(const nnrt_leaky_relu_s8_params_t *params,
                                 const int8_t *input, int8_t *output, int32_t size);

/** int16 (TFLM's leaky_relu.cc takes int16 as int8, with the int16 range). */
nnrt_status_t nnrt_leaky_relu_s16(const nnrt_leaky_relu_s8_params_t *params,
                                  const int16_t *input, int16_t *output, int32_t size);

/** out = in > 0 ? in : in * alpha. */
nnrt_status_t nnrt_leaky_relu_f32(float alpha, const float *input, float *output,
                                  int32_t size);

/* ------------------------------------------------------------------------------------ */
/* LOGISTIC / TANH                                                                       */
/* ------------------------------------------------------------------------------------ */

/**
 * LOGISTIC and TANH int8: the input (minus its zero point) is rescaled to Q4.27 and
 * fed to the fixed-point function (fixedpoint.h). Inputs at or beyond
 * +-input_range_radius saturate. The output quantisation is fixed by the op, as in
 * TFLM: LOGISTIC scale 1/256 zero point -128, TANH scale 1/128 zero point 0 (TFLM
 * does not read the output tensor's scale; neither do these kernels).
 */
typedef struct {
    int32_t input_zero_point;   /**< [-128, 127] */
    int32_t input_range_radius; /**< >= 0: |in - zp| >= radius saturates */
    int32_t input_multiplier;   /**< in_scale * 2^27, Q31 mantissa in [2^30, 2^31) */
    int32_t input_shift;        /**< its power of two, [0, 30] when radius > 0 */
} nnrt_sigmoid_s8_params_t;

/** 1 unless a non-negative range radius and, with a radius, an input shift -31..30
 *  (the int8 LOGISTIC / TANH guard, kernels/internal/sigmoid.h). */
#define NNRT_SIGMOID_S8_PARAMS_BAD(params)                                                   \
    ((params)->input_range_radius < 0                                                       \
     || ((params)->input_range_radius > 0                                                   \
         && ((params)->input_shift < -31 || (params)->input_shift > 30)))

/** out = round(256 * logistic(x)) - 128, saturated to int8. */
nnrt_status_t nnrt_logistic_s8(const nnrt_sigmoid_s8_params_t *params, const int8_t *input,
                               int8_t *output, int32_t size);

/** out = 1 if x > 16.619..., exp(x) if x < -9, else 1 / (1 + exp(-x)) (TFLM's cutoffs). */
nnrt_status_t nnrt_logistic_f32(const float *input, float *output, int32_t size);

/** out = round(128 * tanh(x)), saturated to int8. */
nnrt_status_t nnrt_tanh_s8(const nnrt_sigmoid_s8_params_t *params, const int8_t *input,
                           int8_t *output, int32_t size);

/** out = tanhf(in). */
nnrt_status_t nnrt_tanh_f32(const float *input, float *output, int32_t size);

/**
 * LOGISTIC and TANH int16 (TFLM's 16x8 quantisation, and the int8 LSTM's gates): zero
 * points 0, output scale 2^-15. The input is rescaled to the table's grid, x' = (x *
 * input_multiplier + (1 << (input_left_shift - 1))) >> input_left_shift, with 2^9
 * (LOGISTIC) or 2^8 (TANH) steps per 1/24, and interpolated linearly in
 * nnrt_sigmoid_table_u16. TFLM's power-of-two case (multiplier 0, shift s) is
 * multiplier 3 << s, shift 0 here: the compiler passes it so.
 */
typedef struct {
    int32_t input_multiplier;   /**< [1, 65535] */
    int32_t input_left_shift;   /**< [0, 31]: a right shift, despite TFLM's name */
} nnrt_sigmoid_s16_params_t;

/** sigmoid(i / 24) in units of 2^-16 with a midpoint correction; entry 255 = 65535
 *  (generated: scripts/nnopt/sigmoid_table.py). */
extern const uint16_t nnrt_sigmoid_table_u16[256];

/** out = 2^15 * logistic(x) on the table (wraps to -32768 at the top, as TFLM). */
nnrt_status_t nnrt_logistic_s16(const nnrt_sigmoid_s16_params_t *params,
                                const int16_t *input, int16_t *output, int32_t size);

/** out = 2^15 * tanh(x) on the sigmoid table, saturated at +-32767. */
nnrt_status_t nnrt_tanh_s16(const nnrt_sigmoid_s16_params_t *params, const int16_t *input,
                            int16_t *output, int32_t size);

/* ------------------------------------------------------------------------------------ */
/* HARD_SWISH                                                                            */
/* ------------------------------------------------------------------------------------ */

/**
 * HARD_SWISH int8 (x * relu6(x + 3) / 6) in TFLM's 16-bit fixed-point: the input on a
 * 128x finer "hires" scale, a "reluish" factor in [0, 1] and the output multiplier,
 * both as Q15 int16 multipliers with an exponent.
 */
typedef struct {
    int32_t input_zero_point;       /**< [-128, 127] */
    int32_t output_zero_point;      /**< [-128, 127] */
    int32_t reluish_multiplier;     /**< Q15 in [2^14, 2^15 - 1] (or 0) */
    int32_t reluish_exponent;       /**< [-31, 31] */
    int32_t output_multiplier;      /**< Q15 in [2^14, 2^15 - 1] (or 0) */
    int32_t output_exponent;        /**< [-31, 0] */
} nnrt_hard_swish_s8_params_t;

/** HARD_SWISH int8, see nnrt_hard_swish_s8_params_t. */
nnrt_status_t nnrt_hard_swish_s8(const nnrt_hard_swish_s8_params_t *params,
                                 const int8_t *input, int8_t *output, int32_t size);

/** out = in * min(6, max(0, in + 3)) / 6. */
nnrt_status_t nnrt_hard_swish_f32(const float *input, float *output, int32_t size);

/* ------------------------------------------------------------------------------------ */
/* Table lookup                                                                          */
/* ------------------------------------------------------------------------------------ */

/**
 * out[i] = table[(uint8_t)in[i]]: any int8 -> int8 element-wise function whose 256
 * values the compiler computed at build time (nnopt uses it for int8 LOGISTIC, TANH and
 * HARD_SWISH, with tables proven equal to the kernels above on all 256 inputs).
 * @param table 256 entries, indexed by the input byte read as unsigned (0..127 are the
 *              inputs 0..127, 128..255 the inputs -128..-1)
 */
nnrt_status_t nnrt_table_lookup_s8(const int8_t *table, const int8_t *input, int8_t *output,
                                   int32_t size);

/**
 * int8 PRELU parameters: TFLM's PreluParams (CalculatePreluParams): for x >= 0
 * out = MBQM(x - zp_in, multiplier_1, shift_1), else MBQM((x - zp_in) * (alpha -
 * zp_alpha), multiplier_2, shift_2); plus the output zero point, clamped to int8.
 */
typedef struct {
    nnrt_broadcast_t bcast;      /**< input (1) against alpha (2) onto the output */
    int32_t input_offset;        /**< -input zero point */
    int32_t alpha_offset;        /**< -alpha zero point */
    int32_t output_offset;       /**< output zero point */
    int32_t output_multiplier_1; /**< Q31 of s_in / s_out */
    int32_t output_shift_1;
    int32_t output_multiplier_2; /**< Q31 of s_in * s_alpha / s_out */
    int32_t output_shift_2;
} nnrt_prelu_s8_params_t;

/** int8 PRELU with broadcasting alpha (TFLM's BroadcastPrelu4DSlow). In place over a
 *  same-sized input. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_prelu_s8(const nnrt_prelu_s8_params_t *params, const int8_t *input,
                            const int8_t *alpha, int8_t *output);

/** float32 PRELU: out = x >= 0 ? x : x * alpha, alpha broadcast (TFLM's
 *  BroadcastPrelu4DSlowFloat). In place over a same-sized input. */
nnrt_status_t nnrt_prelu_f32(const nnrt_broadcast_t *bcast, const float *input,
                             const float *alpha, float *output);

/** float32 ELU: out = x < 0 ? expm1f(x) : x (TFLM's reference Elu). In place. The int8
 *  ELU is a 256-entry table (nnrt_table_lookup_s8) built at compile time. */
nnrt_status_t nnrt_elu_f32(const float *input, float *output, int32_t size);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_ACTIVATION_H_ */
