/*
 * int8 LOG_SOFTMAX over the last axis (normalize.h), TFLM's reference
 * LogSoftmaxQuantized: per row, the differences to the row maximum (within diff_min)
 * rescaled to Q5.26, exp in Q0.31 summed in Q12.19, log of the sum in Q5.26 (gemmlowp's
 * log_x_for_x_greater_than_or_equal_to_1, below), then each output is
 * (diff - log_sum) rounded from Q5.26 to units of 1/16 plus 127 (output scale 16/256,
 * zero point 127, which TFLM requires), clamped; differences at or below the adjusted
 * minimum give -128. The row is read before it is written, element by element: in
 * place capable.
 */
#include <stddef.h>

#include "nnrt/kernels/fixedpoint.h"
#include "nnrt/kernels/normalize.h"
#include "nnrt/kernels/quant.h"

/* x * 2^exponent saturating, exponent >= 0 (TFLM's SaturatingRoundingMultiplyByPOTParam
 * as the log uses it). */
static int32_t sat_shl(int32_t x, int exponent)
{
    return exponent == 0 ? x : nnrt_fp_sat_mul_pot(x, exponent);
}

static int32_t sat_add(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + (int64_t)b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

static int32_t sat_sub(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a - (int64_t)b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

/* log(x) of x >= 1 in Q12.19 (raw), result in Q5.26: a quartic-ish rational fit around
 * 2^(1/4) after normalising x to [sqrt(1/2), 1) (gemmlowp's log_x..._impl, output
 * integer bits 5, accumulator integer bits 6). */
static int32_t log_q12_to_q5(int32_t x)
{
    enum { IN_BITS = 12, ACC_BITS = 6, OUT_BITS = 5 };
    const int32_t log_2 = 1488522236;
    const int32_t sqrt_sqrt_half = 1805811301;
    const int32_t sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297;
    const int32_t alpha_d = 127690142;
    const int32_t alpha_i = 1057819769;
    const int32_t alpha_f = 638450708;
    const int32_t shifted_quarter = nnrt_fp_rescale(536870912, 0, ACC_BITS);

    const int a_headroom_plus_1 = nnrt_fp_clz((uint32_t)x);
    const int32_t r_a_tmp = sat_shl(x, a_headroom_plus_1 - 1);
    const int32_t r_a = sat_shl(nnrt_fp_mul(r_a_tmp, sqrt_half), 1);
    const int32_t a_pow_2_adj =
        sat_add(sat_shl(IN_BITS - a_headroom_plus_1, 31 - ACC_BITS), shifted_quarter);

    const int32_t z_b = nnrt_fp_mul(x, sqrt_half);
    const int b_headroom = nnrt_fp_clz((uint32_t)z_b) - 1;
    const int32_t r_b = sat_shl(x, b_headroom);
    const int32_t b_pow_2_adj =
        sat_sub(sat_shl(IN_BITS - b_headroom, 31 - ACC_BITS), shifted_quarter);

    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t pow_2_adj = a_pow_2_adj > b_pow_2_adj ? a_pow_2_adj : b_pow_2_adj;

    const int32_t p = nnrt_fp_rounding_half_sum(r, sqrt_sqrt_half);
    int32_t q = nnrt_fp_sub(r, sqrt_sqrt_half);
    q = nnrt_fp_add(q, q);
    const int32_t common_sq = nnrt_fp_mul(q, q);
    const int32_t num =
        nnrt_fp_add(nnrt_fp_mul(q, r), nnrt_fp_mul(nnrt_fp_mul(q, common_sq), alpha_n));
    const int32_t denom_minus_one = nnrt_fp_add(
        nnrt_fp_mul(p, nnrt_fp_add(nnrt_fp_add(alpha_i, q), nnrt_fp_mul(alpha_d, common_sq))),
        nnrt_fp_mul(alpha_f, q));
    const int32_t recip_denom = nnrt_fp_one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
    const int32_t num_scaled = nnrt_fp_rescale(num, 0, ACC_BITS);
    const int32_t sum = nnrt_fp_add(nnrt_fp_mul(pow_2_adj, log_2),
                                    nnrt_fp_mul(num_scaled, recip_denom));
    return nnrt_fp_rescale(sum, ACC_BITS, OUT_BITS);
}

nnrt_status_t nnrt_log_softmax_s8(const nnrt_log_softmax_s8_params_t *params,
                                  const int8_t *input, int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL || params->outer < 1
        || params->depth < 1 || params->input_left_shift < 0 || params->input_left_shift > 31
        || params->reverse_scaling_shift > 0 || params->reverse_scaling_shift < -31
        || params->diff_min > 0) {
        return NNRT_ERR_ARG;
    }
    const int32_t depth = params->depth;
    for (int32_t row = 0; row < params->outer; ++row) {
        const int8_t *x = input + (size_t)row * (size_t)depth;
        int8_t *y = output + (size_t)row * (size_t)depth;
        int32_t max = INT8_MIN;
        for (int32_t c = 0; c < depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        int32_t sum_q12 = 0;
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t diff = x[c] - max;
            if (diff >= params->diff_min) {
                const int32_t d_q5 = nnrt_multiply_by_quantized_multiplier(
                    diff, params->input_multiplier, params->input_left_shift);
                sum_q12 = nnrt_fp_add(sum_q12,
                                      nnrt_fp_rescale(nnrt_fp_exp_on_negative_values(d_q5, 5),
                                                      0, 12));
            }
        }
        const int32_t log_sum_q5 = log_q12_to_q5(sum_q12);
        const int32_t shifted = nnrt_fp_add(log_sum_q5, INT32_MIN);
        int32_t adjusted = nnrt_multiply_by_quantized_multiplier(
            shifted, params->reverse_scaling_divisor, params->reverse_scaling_shift);
        adjusted = params->diff_min - 1 > adjusted ? params->diff_min - 1 : adjusted;
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t diff = x[c] - max;
            if (diff > adjusted) {
                const int32_t d_q5 = nnrt_multiply_by_quantized_multiplier(
                    diff, params->input_multiplier, params->input_left_shift);
                const int32_t v =
                    nnrt_rounding_divide_by_pot(nnrt_fp_sub(d_q5, log_sum_q5), 31 - 5 - 4)
                    + INT8_MAX;
                y[c] = (int8_t)nnrt_clamp_i32(v, INT8_MIN, INT8_MAX);
            } else {
                y[c] = INT8_MIN;
            }
        }
    }
    return NNRT_OK;
}
