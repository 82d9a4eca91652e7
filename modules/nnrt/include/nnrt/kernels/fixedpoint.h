/**
 * @file fixedpoint.h
 * @brief Q-format fixed-point math (exp, 1/(1+x), tanh, logistic) in the arithmetic of
 *        gemmlowp's `fixedpoint.h`, which TFLite Micro's int8 softmax, logistic and
 *        tanh reference kernels are built on.
 *
 * A value is an `int32_t` raw number in Qm.(31-m): `m` integer bits (passed as
 * `int_bits`), 31 - m fractional bits, real = raw / 2^(31-m). Q0.31 ("F0") holds
 * [-1, 1); its "one" is INT32_MAX. Every function reproduces gemmlowp's scalar int32
 * code path bit for bit (same polynomial, same constants, same rounding and saturation
 * points); that is what makes the kernels bit-exact with the oracle. Additions that
 * gemmlowp does in plain `int32_t` are done here in wrapping unsigned arithmetic (the
 * same result without the undefined behaviour).
 *
 * Separate from quant.h (requantisation) because only a few kernels need it.
 */
#ifndef NNRT_KERNELS_FIXEDPOINT_H_
#define NNRT_KERNELS_FIXEDPOINT_H_

#include <stdint.h>

#include "nnrt/kernels/quant.h"

/** Q0.31 one (the largest Q0.31 value). */
#define NNRT_FP_Q0_ONE INT32_MAX

/** a + b, wrapping on overflow like two's-complement hardware. */
static inline int32_t nnrt_fp_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/** a - b, wrapping on overflow like two's-complement hardware. */
static inline int32_t nnrt_fp_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/** Product of Qa and Qb as Q(a+b): rounding doubling high multiply. */
static inline int32_t nnrt_fp_mul(int32_t a, int32_t b)
{
    return nnrt_sat_rounding_doubling_high_mul(a, b);
}

/** (a + b) / 2 rounded half away from zero, without overflow. */
static inline int32_t nnrt_fp_rounding_half_sum(int32_t a, int32_t b)
{
    int64_t sum = (int64_t)a + (int64_t)b;
    int64_t sign = sum >= 0 ? 1 : -1;
    return (int32_t)((sum + sign) / 2);
}

/**
 * x * 2^exponent in the same Q format: exponent > 0 is a left shift saturating to
 * [INT32_MIN, INT32_MAX], exponent < 0 a rounding right shift. exponent in [-31, 30].
 */
static inline int32_t nnrt_fp_sat_mul_pot(int32_t x, int exponent)
{
    if (exponent > 0) {
        const int32_t threshold = (int32_t)((UINT32_C(1) << (31 - exponent)) - 1u);
        if (x > threshold) {
            return INT32_MAX;
        }
        if (x < -threshold) {
            return INT32_MIN;
        }
        return (int32_t)((uint32_t)x << exponent);
    }
    if (exponent < 0) {
        return nnrt_rounding_divide_by_pot(x, -exponent);
    }
    return x;
}

/** Re-express a Q(src_bits) value in Q(dst_bits), saturating/rounding. */
static inline int32_t nnrt_fp_rescale(int32_t x, int src_bits, int dst_bits)
{
    return nnrt_fp_sat_mul_pot(x, src_bits - dst_bits);
}

/** Number of leading zero bits of x (32 for 0). */
static inline int nnrt_fp_clz(uint32_t x)
{
#if defined(__GNUC__)
    return x == 0u ? 32 : __builtin_clz(x);
#else
    int n = 0;
    if (x == 0u) {
        return 32;
    }
    while ((x & 0x80000000u) == 0u) {
        x <<= 1;
        ++n;
    }
    return n;
#endif
}

/** exp(a) for a Q0.31 a in [-1/4, 0): Taylor series around -1/8. Result Q0.31. */
static inline int32_t nnrt_fp_exp_on_interval_neg_quarter_0(int32_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668; /* exp(-1/8) in Q0.31 */
    const int32_t one_third = 715827883;             /* 1/3 in Q0.31 */
    const int32_t x = nnrt_fp_add(a, INT32_C(1) << 28); /* a + 1/8 */
    const int32_t x2 = nnrt_fp_mul(x, x);
    const int32_t x3 = nnrt_fp_mul(x2, x);
    const int32_t x4 = nnrt_fp_mul(x2, x2);
    const int32_t x4_over_4 = nnrt_fp_sat_mul_pot(x4, -2);
    const int32_t poly = nnrt_fp_sat_mul_pot(
        nnrt_fp_add(nnrt_fp_mul(nnrt_fp_add(x4_over_4, x3), one_third), x2), -1);
    return nnrt_fp_add(exp_minus_one_eighth,
                       nnrt_fp_mul(exp_minus_one_eighth, nnrt_fp_add(x, poly)));
}

/**
 * exp(a) for a <= 0 given in Q(int_bits).(31-int_bits), int_bits in [0, 6]; result in
 * Q0.31 (exp(0) = INT32_MAX). The fractional quarter is done by the series, whole
 * quarters by multiplying constants exp(-2^k) (a barrel shifter on the bits of -a).
 */
static inline int32_t nnrt_fp_exp_on_negative_values(int32_t a, int int_bits)
{
    static const int32_t k_exp_minus_pow2[7] = {
        1672461947, /* exp(-1/4) */
        1302514674, /* exp(-1/2) */
        790015084,  /* exp(-1)   */
        290630308,  /* exp(-2)   */
        39332535,   /* exp(-4)   */
        720401,     /* exp(-8)   */
        242,        /* exp(-16)  */
    };
    const int frac_bits = 31 - int_bits;
    const int32_t one_quarter = INT32_C(1) << (frac_bits - 2);
    const int32_t mask = one_quarter - 1;
    const int32_t a_mod_quarter_minus_quarter = nnrt_fp_sub(a & mask, one_quarter);
    int32_t result = nnrt_fp_exp_on_interval_neg_quarter_0(
        nnrt_fp_rescale(a_mod_quarter_minus_quarter, int_bits, 0));
    const int32_t remainder = nnrt_fp_sub(a_mod_quarter_minus_quarter, a);
    for (int k = 0; k < 7; ++k) {
        const int exponent = k - 2; /* the constant is exp(-2^exponent) */
        if (int_bits > exponent) {
            const int shift = frac_bits + exponent;
            if ((remainder & (INT32_C(1) << shift)) != 0) {
                result = nnrt_fp_mul(result, k_exp_minus_pow2[k]);
            }
        }
    }
    if (int_bits > 5) {
        const int32_t clamp = -(INT32_C(1) << (36 - int_bits)); /* -32.0 */
        if (a < clamp) {
            result = 0;
        }
    }
    if (a == 0) {
        result = NNRT_FP_Q0_ONE;
    }
    return result;
}

/* Newton-Raphson for 1 / (1 + a) with a in Q0.31 [0, 1); returns x in Q2.29. */
static inline int32_t nnrt_fp_newton_reciprocal_q2(int32_t half_denominator)
{
    const int32_t c48_over_17 = 1515870810;      /* 48/17 in Q2.29 */
    const int32_t c_neg32_over_17 = -1010580540; /* -32/17 in Q2.29 */
    const int32_t one_q2 = INT32_C(1) << 29;
    int32_t x = nnrt_fp_add(c48_over_17, nnrt_fp_mul(half_denominator, c_neg32_over_17));
    for (int i = 0; i < 3; ++i) {
        const int32_t half_denominator_times_x = nnrt_fp_mul(half_denominator, x);
        const int32_t one_minus = nnrt_fp_sub(one_q2, half_denominator_times_x);
        x = nnrt_fp_add(x, nnrt_fp_rescale(nnrt_fp_mul(x, one_minus), 4, 2));
    }
    return x;
}

/** 1 / (1 + a) for a Q0.31 a in [0, 1); result Q0.31 in (1/2, 1]. */
static inline int32_t nnrt_fp_one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t half_denominator = nnrt_fp_rounding_half_sum(a, NNRT_FP_Q0_ONE);
    const int32_t x = nnrt_fp_newton_reciprocal_q2(half_denominator);
    /* x is 2/(1+a) in Q2.29, i.e. 1/(1+a) in Q1.30; back to Q0.31. */
    return nnrt_fp_rescale(x, 1, 0);
}

/** (1 - a) / (1 + a) for a Q0.31 a in [0, 1); result Q0.31. */
static inline int32_t nnrt_fp_one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t half_denominator = nnrt_fp_rounding_half_sum(a, NNRT_FP_Q0_ONE);
    const int32_t x = nnrt_fp_newton_reciprocal_q2(half_denominator);
    return nnrt_fp_rescale(nnrt_fp_sub(x, INT32_C(1) << 29), 2, 0);
}

/** tanh(a) for a in Q(int_bits), int_bits in [0, 5]; result Q0.31. */
static inline int32_t nnrt_fp_tanh(int32_t a, int int_bits)
{
    if (a == 0) {
        return 0;
    }
    /* -|a| read as Q(int_bits+1) is -2|a|; tanh|a| = (1 - e^-2|a|) / (1 + e^-2|a|). */
    const int32_t neg_abs = a < 0 ? a : (int32_t)(0u - (uint32_t)a);
    const int32_t t = nnrt_fp_one_minus_x_over_one_plus_x_for_x_in_0_1(
        nnrt_fp_exp_on_negative_values(neg_abs, int_bits + 1));
    return a < 0 ? (int32_t)(0u - (uint32_t)t) : t;
}

/** logistic(a) = 1 / (1 + e^-a) for a in Q(int_bits), int_bits in [0, 6]; Q0.31. */
static inline int32_t nnrt_fp_logistic(int32_t a, int int_bits)
{
    if (a == 0) {
        return INT32_C(1) << 30; /* 1/2 */
    }
    const int32_t abs_a = a > 0 ? a : (int32_t)(0u - (uint32_t)a);
    const int32_t r_pos = nnrt_fp_one_over_one_plus_x_for_x_in_0_1(
        nnrt_fp_exp_on_negative_values((int32_t)(0u - (uint32_t)abs_a), int_bits));
    return a > 0 ? r_pos : nnrt_fp_sub(NNRT_FP_Q0_ONE, r_pos);
}

/**
 * 1 / x for a positive x in Q(x_int_bits): returns the Q0.31 reciprocal of x's
 * mantissa and in *num_bits_over_unit the power of two to divide by, i.e.
 * 1/x = result * 2^-num_bits_over_unit. x must be > 0.
 */
static inline int32_t nnrt_fp_reciprocal(int32_t x, int x_int_bits, int *num_bits_over_unit)
{
    const int headroom_plus_one = nnrt_fp_clz((uint32_t)x);
    *num_bits_over_unit = x_int_bits - headroom_plus_one;
    const int32_t shifted_minus_one =
        (int32_t)(((uint32_t)x << headroom_plus_one) - (UINT32_C(1) << 31));
    return nnrt_fp_one_over_one_plus_x_for_x_in_0_1(shifted_minus_one);
}

#endif /* NNRT_KERNELS_FIXEDPOINT_H_ */
