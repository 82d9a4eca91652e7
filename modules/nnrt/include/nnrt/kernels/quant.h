/**
 * @file quant.h
 * @brief Fixed-point arithmetic of TFLite Micro's reference int8 kernels.
 *
 * Rounding-doubling high multiply and rounding right shift as in gemmlowp; a real
 * multiplier is (multiplier in Q31, shift) from nnopt.multiplier.quantize_multiplier().
 * Inline so that every kernel gets the same, bit-exact arithmetic.
 */
#ifndef NNRT_KERNELS_QUANT_H_
#define NNRT_KERNELS_QUANT_H_

#include <stdint.h>

/** (a * b * 2) >> 32 rounded to nearest, saturating the single overflow case. */
static inline int32_t nnrt_sat_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    int64_t ab = (int64_t)a * (int64_t)b;
    int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/** x / 2^exponent rounded to nearest, ties away from zero. exponent in [0, 31]. */
static inline int32_t nnrt_rounding_divide_by_pot(int32_t x, int exponent)
{
    int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + ((x < 0) ? 1 : 0);
    return (x >> exponent) + ((remainder > threshold) ? 1 : 0);
}

/** x * multiplier * 2^shift in TFLM's (double-rounding) reference arithmetic. */
static inline int32_t nnrt_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift)
{
    int left_shift = shift > 0 ? shift : 0;
    int right_shift = shift > 0 ? 0 : -shift;
    return nnrt_rounding_divide_by_pot(
        nnrt_sat_rounding_doubling_high_mul((int32_t)((uint32_t)x << left_shift), multiplier),
        right_shift);
}

/**
 * x * multiplier * 2^shift for a 64-bit accumulator (the 16x8 kernels), in TFLM's
 * arithmetic for int64 inputs (tensorflow/lite/kernels/internal/common.cc): the Q31
 * multiplier rounded to Q15 (saturating at 0x7FFF), one rounding shift by 15 - shift
 * (half up). multiplier >= 0, shift in [-31, 7], |x| < 2^47; the result is truncated
 * to 32 bits as TFLM's cast does.
 */
static inline int32_t nnrt_multiply_by_quantized_multiplier_s64(int64_t x, int32_t multiplier,
                                                                int shift)
{
    const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int total_shift = 15 - shift;
    const int64_t round = (int64_t)1 << (total_shift - 1);
    return (int32_t)((x * (int64_t)reduced + round) >> total_shift);
}

/** Clamp to [lo, hi]. */
static inline int32_t nnrt_clamp_i32(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

#endif /* NNRT_KERNELS_QUANT_H_ */
