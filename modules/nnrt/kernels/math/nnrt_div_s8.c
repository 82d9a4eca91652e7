/*
 * int8 DIV with broadcasting, TFLM's reference DivElementwise (reference/div.h): with
 * v1, v2 the offset inputs (signs moved so that v2 > 0), the Q31 reciprocal of v2
 * (GetReciprocal: gemmlowp's one_over_one_plus_x_for_x_in_0_1 of the normalised
 * mantissa, 2^-recip_shift), v1 shifted left by its headroom (CountLeadingSignBits)
 * and multiplied by it, then one requantisation by the output multiplier and the total
 * shift output_shift - recip_shift - headroom, offset and clamped.
 *
 * TFLM divides by 2^-total_shift with gemmlowp's RoundingDivideByPOT, which asserts an
 * exponent of at most 31 and otherwise shifts by more than the width (undefined; a
 * small quotient then comes out as garbage that differs between hosts and Cortex-M).
 * Here the division is exact for every exponent (64-bit mask and shift: 0 or +-1 past
 * 31), which equals TFLM's wherever TFLM's is defined. A divisor equal to its zero point
 * gives the output zero point (TFLM: a DCHECK, undefined). In place as the binary
 * kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/fixedpoint.h"
#include "nnrt/kernels/math.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

/* CountLeadingSignBits: the redundant sign bits of x (31 for 0). */
static inline int leading_sign_bits(int32_t x)
{
    const uint32_t u = x < 0 ? ~(uint32_t)x : (uint32_t)x;
    return nnrt_fp_clz(u) - 1;
}

/* x / 2^exponent rounded half away from zero (gemmlowp's RoundingDivideByPOT, on 64
 * bits so that any exponent in [0, 62] is exact). */
static inline int32_t divide_by_pot(int32_t x, int exponent)
{
    if (exponent > 62) {
        return 0;
    }
    const int64_t mask = ((int64_t)1 << exponent) - 1;
    const int64_t remainder = (int64_t)x & mask;
    const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (int32_t)(((int64_t)x >> exponent) + (remainder > threshold ? 1 : 0));
}

static inline int8_t apply(const nnrt_mul_s8_params_t *p, int8_t x1, int8_t x2)
{
    int32_t v1 = p->input1_offset + x1;
    int32_t v2 = p->input2_offset + x2;
    if (v2 == 0) {
        return (int8_t)nnrt_clamp_i32(p->output_offset, p->act_min, p->act_max);
    }
    if (v2 < 0) {
        v1 = -v1;
        v2 = -v2;
    }
    int recip_shift;
    const int32_t inverse = nnrt_fp_reciprocal(v2, 31, &recip_shift);
    const int headroom = leading_sign_bits(v1);
    const int32_t unscaled =
        nnrt_sat_rounding_doubling_high_mul((int32_t)((uint32_t)v1 << headroom), inverse);
    const int total_shift = p->output_shift - recip_shift - headroom;
    const int32_t scaled = divide_by_pot(
        nnrt_sat_rounding_doubling_high_mul(unscaled, p->output_multiplier), -total_shift);
    return (int8_t)nnrt_clamp_i32(p->output_offset + scaled, p->act_min, p->act_max);
}

NNRT_BINARY_KERNEL(nnrt_div_s8, nnrt_mul_s8_params_t, int8_t, NNRT_DIV_S8_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
