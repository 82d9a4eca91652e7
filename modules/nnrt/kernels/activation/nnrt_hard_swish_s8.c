/* HARD_SWISH int8 (TFLM reference_ops::HardSwish<int8_t>): 16-bit fixed point with
 * gemmlowp's int16 rounding multiply and TFLM's truncating doubling multiply. */
#include "nnrt/kernels/activation.h"

/* gemmlowp SaturatingRoundingDoublingHighMul on int16. */
static int16_t srdhm_i16(int16_t a, int16_t b)
{
    if (a == INT16_MIN && b == INT16_MIN) {
        return INT16_MAX;
    }
    const int32_t ab = (int32_t)a * (int32_t)b;
    const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((ab + nudge) / (1 << 15));
}

/* TFLM SaturatingDoublingHighMul on int16: like the above but truncating. */
static int16_t sdhm_i16(int16_t a, int16_t b)
{
    if (a == INT16_MIN && b == INT16_MIN) {
        return INT16_MAX;
    }
    return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

/* gemmlowp RoundingDivideByPOT on int16, exponent in [0, 31] (the int16 mask wraps
 * for exponents >= 16, exactly as there). */
static int16_t rdbp_i16(int16_t x, int exponent)
{
    const int16_t mask = (int16_t)(((int64_t)1 << exponent) - 1);
    const int16_t remainder = (int16_t)(x & mask);
    const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
    return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

/* value * 2^amount saturated to int16, amount >= 0. */
static int16_t sat_left_shift_i16(int16_t value, int amount)
{
    if (value == 0) {
        return 0;
    }
    if (amount >= 16) {
        return value > 0 ? INT16_MAX : INT16_MIN;
    }
    const int32_t r = (int32_t)value * (INT32_C(1) << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

nnrt_status_t nnrt_hard_swish_s8(const nnrt_hard_swish_s8_params_t *p, const int8_t *input,
                                 int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || p == NULL || size < 0 ||
        p->reluish_multiplier < 0 || p->reluish_multiplier > INT16_MAX ||
        p->output_multiplier < 0 || p->output_multiplier > INT16_MAX ||
        p->reluish_exponent < -31 || p->reluish_exponent > 31 ||
        p->output_exponent < -31 || p->output_exponent > 0) {
        return NNRT_ERR_ARG;
    }
    const int16_t reluish_mult = (int16_t)p->reluish_multiplier;
    const int16_t out_mult = (int16_t)p->output_multiplier;
    const int reluish_exp = (int)p->reluish_exponent;
    const int out_right_shift = -(int)p->output_exponent;
    for (int32_t i = 0; i < size; ++i) {
        const int16_t x = (int16_t)((int32_t)input[i] - p->input_zero_point);
        /* 128x finer scale: |x| <= 255 so this fits int16 */
        const int16_t x_hires = (int16_t)(x * 128);
        const int16_t x_preshift_out = srdhm_i16(x_hires, out_mult);
        /* relu6(x + 3) / 6 as a [0, 1] factor: first x on the scale where 3.0 = 2^15 */
        int16_t reluish = x_hires;
        if (reluish_exp > 0) {
            reluish = sat_left_shift_i16(reluish, reluish_exp - 1);
        }
        reluish = srdhm_i16(reluish, reluish_mult);
        if (reluish_exp > 0) {
            reluish = sat_left_shift_i16(reluish, 1);
        } else if (reluish_exp < 0) {
            reluish = rdbp_i16(reluish, -reluish_exp);
        }
        reluish = (int16_t)(((int32_t)reluish + (1 << 15)) >> 1); /* [-1,1] -> [0,1] */
        const int16_t preshift_out = sdhm_i16(reluish, x_preshift_out);
        int16_t y = rdbp_i16(preshift_out, out_right_shift);
        y = (int16_t)((int32_t)y + p->output_zero_point); /* wraps like TFLM's int16 */
        output[i] = (int8_t)(y > INT8_MAX ? INT8_MAX : (y < INT8_MIN ? INT8_MIN : y));
    }
    return NNRT_OK;
}
