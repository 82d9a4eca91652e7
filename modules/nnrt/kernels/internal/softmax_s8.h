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

/* exp(diff * beta * input_scale) in Q0.31 (gemmlowp's exp_on_negative_values of the
 * difference rescaled into Q5.26), for diff_min <= diff <= 0; 0 below diff_min, where
 * the reference skips the element: the sum gains Rescale(0) = 0 and the output
 * (reciprocal * 0) / 2^exponent + OUT_MIN = OUT_MIN, the reference's value. */
static int32_t nnrt_softmax_exp(int32_t diff, int32_t mult, int left_shift, int32_t diff_min)
{
    if (diff < diff_min) {
        return 0;
    }
    /* |diff| * 2^left_shift < 2^31 is guaranteed by diff_min */
    const int32_t scaled =
        nnrt_sat_rounding_doubling_high_mul((int32_t)((uint32_t)diff << left_shift), mult);
    return nnrt_fp_exp_on_negative_values(scaled, 5); /* Q5.26 -> Q0.31 */
}

/** Entries of the exp table: every difference of two int8 values, 0 ... -255. */
#define NNRT_SOFTMAX_TABLE 256

/* table[i] = nnrt_softmax_exp(-i) for i < NNRT_SOFTMAX_TABLE (1 KB, the caller's stack):
 * an int8 row's differences to its maximum take at most these 256 values, so a softmax
 * over more elements than that computes each exp once instead of twice per element.
 * Returns 1 (filled) when 2 * rows * depth exceeds the table's entries, else 0. */
static int nnrt_softmax_table(const nnrt_softmax_s8_params_t *params, int32_t rows,
                              int32_t depth, int32_t *table)
{
    if (2 * (int64_t)rows * depth <= NNRT_SOFTMAX_TABLE) {
        return 0;
    }
    for (int32_t i = 0; i < NNRT_SOFTMAX_TABLE; ++i) {
        table[i] = nnrt_softmax_exp(-i, params->input_multiplier,
                                    (int)params->input_left_shift, params->diff_min);
    }
    return 1;
}

/**
 * `nnrt_status_t NAME(const nnrt_softmax_s8_params_t *params, const int8_t *input,
 * OUT_T *output, int32_t rows, int32_t depth)`: NNRT_ERR_ARG for a NULL pointer or
 * what nnrt_softmax_s8_check() rejects; HOOK(params, input, output, rows, depth): a
 * library path that may return NNRT_OK, or nothing. Over more than
 * NNRT_SOFTMAX_TABLE / 2 elements the exps come from nnrt_softmax_table() (the same
 * values, each computed once).
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
        int32_t table[NNRT_SOFTMAX_TABLE];                                                     \
        const int tabled = nnrt_softmax_table(params, rows, depth, table);                     \
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
                const int32_t e = tabled ? table[-diff]                                        \
                                         : nnrt_softmax_exp(diff, mult, left_shift, diff_min); \
                sum_of_exps = nnrt_fp_add(sum_of_exps, nnrt_fp_rescale(e, 0, 12));             \
            }                                                                                  \
            int num_bits_over_unit;                                                            \
            const int32_t reciprocal = nnrt_fp_reciprocal(sum_of_exps, 12, &num_bits_over_unit);\
            const int exponent = num_bits_over_unit + 31 - (OUT_BITS);                         \
            for (int32_t c = 0; c < depth; ++c) {                                              \
                const int32_t diff = (int32_t)in[c] - max_in_row;                              \
                const int32_t e = tabled ? table[-diff]                                        \
                                         : nnrt_softmax_exp(diff, mult, left_shift, diff_min); \
                const int32_t y =                                                              \
                    rounding_divide_wide(nnrt_fp_mul(reciprocal, e), exponent) + (OUT_MIN);    \
                out[c] = (OUT_T)nnrt_clamp_i32(y, OUT_MIN, OUT_MAX);                           \
            }                                                                                  \
        }                                                                                      \
        return NNRT_OK;                                                                        \
    }

/** HOOK of a softmax without a library path. */
#define NNRT_SOFTMAX_NO_HOOK(params, input, output, rows, depth)

#endif /* NNRT_KERNELS_INTERNAL_SOFTMAX_S8_H_ */
