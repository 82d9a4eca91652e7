/*
 * Internal to the nnrt kernels: the one quantised SOFTMAX (TFLM reference_ops::Softmax
 * <int8_t, OUT_T>), int8 input, int8 or int16 output: per row, the differences to the
 * row maximum through the fixed-point exp, their sum, its reciprocal, each output
 * rescaled to OUT_BITS bits and offset by OUT_MIN. The including file compiles it for
 * size (its #pragma, before the includes; see nnrt_softmax_s8.c).
 */
#ifndef NNRT_KERNELS_INTERNAL_SOFTMAX_S8_H_
#define NNRT_KERNELS_INTERNAL_SOFTMAX_S8_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/fixedpoint.h"
#include "nnrt/kernels/softmax.h"

/* x / 2^exponent rounded half away from zero, for an exponent that may exceed 31
 * (TFLM stops there; we round the same way). */
static int32_t rounding_divide_wide(int32_t x, int exponent)
{
    if (exponent <= 31) {
        return nnrt_rounding_divide_by_pot(x, exponent);
    }
    return 0; /* |x| < 2^31 <= 2^(exponent-1): rounds to 0 */
}

/**
 * `nnrt_status_t NAME(const nnrt_softmax_s8_params_t *params, const int8_t *input,
 * OUT_T *output, int32_t rows, int32_t depth)`: NNRT_ERR_ARG for a NULL pointer or
 * what nnrt_softmax_s8_check() rejects; HOOK(params, input, output, rows, depth): a
 * library path that may return NNRT_OK, or nothing.
 */
#define NNRT_SOFTMAX_S8_KERNEL(NAME, OUT_T, OUT_BITS, OUT_MIN, OUT_MAX, HOOK)                  \
    nnrt_status_t NAME(const nnrt_softmax_s8_params_t *params, const int8_t *input,            \
                       OUT_T *output, int32_t rows, int32_t depth)                             \
    {                                                                                          \
        if (input == NULL || output == NULL || params == NULL                                  \
            || NNRT_SOFTMAX_S8_ARGS_BAD(params, rows, depth)) {                                \
            return NNRT_ERR_ARG;                                                               \
        }                                                                                      \
        HOOK(params, input, output, rows, depth)                                               \
        const int32_t mult = params->input_multiplier;                                         \
        const int left_shift = (int)params->input_left_shift;                                  \
        const int32_t diff_min = params->diff_min;                                             \
        for (int32_t r = 0; r < rows; ++r) {                                                   \
            const int8_t *in = input + (size_t)r * (size_t)depth;                              \
            OUT_T *out = output + (size_t)r * (size_t)depth;                                   \
            int32_t max_in_row = INT8_MIN;                                                     \
            for (int32_t c = 0; c < depth; ++c) {                                              \
                max_in_row = in[c] > max_in_row ? in[c] : max_in_row;                          \
            }                                                                                  \
            int32_t sum_of_exps = 0; /* Q12.19 */                                              \
            for (int32_t c = 0; c < depth; ++c) {                                              \
                const int32_t diff = (int32_t)in[c] - max_in_row;                              \
                if (diff >= diff_min) {                                                        \
                    /* |diff| * 2^left_shift < 2^31 is guaranteed by diff_min */               \
                    const int32_t scaled = nnrt_sat_rounding_doubling_high_mul(                \
                        (int32_t)((uint32_t)diff << left_shift), mult); /* Q5.26 */            \
                    sum_of_exps = nnrt_fp_add(                                                 \
                        sum_of_exps,                                                           \
                        nnrt_fp_rescale(nnrt_fp_exp_on_negative_values(scaled, 5), 0, 12));    \
                }                                                                              \
            }                                                                                  \
            int num_bits_over_unit;                                                            \
            const int32_t reciprocal = nnrt_fp_reciprocal(sum_of_exps, 12, &num_bits_over_unit);\
            const int exponent = num_bits_over_unit + 31 - (OUT_BITS);                         \
            for (int32_t c = 0; c < depth; ++c) {                                              \
                const int32_t diff = (int32_t)in[c] - max_in_row;                              \
                if (diff >= diff_min) {                                                        \
                    const int32_t scaled = nnrt_sat_rounding_doubling_high_mul(                \
                        (int32_t)((uint32_t)diff << left_shift), mult);                        \
                    const int32_t e = nnrt_fp_exp_on_negative_values(scaled, 5);               \
                    const int32_t y =                                                          \
                        rounding_divide_wide(nnrt_fp_mul(reciprocal, e), exponent) + (OUT_MIN);\
                    out[c] = (OUT_T)nnrt_clamp_i32(y, OUT_MIN, OUT_MAX);                       \
                } else {                                                                       \
                    out[c] = (OUT_MIN);                                                        \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return NNRT_OK;                                                                        \
    }

/** HOOK of a softmax without a library path. */
#define NNRT_SOFTMAX_NO_HOOK(params, input, output, rows, depth)

#endif /* NNRT_KERNELS_INTERNAL_SOFTMAX_S8_H_ */
