/*
 * Internal to the nnrt kernels: TFLM's int8 requantisation in few instructions,
 * bit-exact with nnrt_multiply_by_quantized_multiplier() (nnrt/kernels/quant.h).
 *
 * TFLM computes x = SRDHM(acc, m) = floor((acc * m + 2^30) / 2^31) (its nudge makes the
 * rounding "half up" for both signs; m >= 0 never hits the saturating case), then
 * rounds x / 2^e half away from zero: floor((x + 2^(e-1) - [x < 0]) / 2^e), e = -shift.
 * For e >= 1 both steps fold into one (floor(floor(a / b) / c) == floor(a / (b c)) for
 * integers), with [x < 0] replaced by [acc < 0] (they differ only when x == 0, and the
 * result is 0 then either way):
 *
 *   result = floor((u + 2^(30+e)) / 2^(31+e)),   u = acc * m + (acc < 0 ? -2^30 : 2^30)
 *
 * and for e >= 2, 2^(30+e) is a multiple of 2^32, so with h = the high word of u
 * (one SMLAL from the sign-dependent start value):
 *
 *   result = (h + 2^(e-2)) >> (e - 1)
 *
 * exactly, with no overflow for any int32 acc (|h| <= 2^30, 2^(e-2) <= 2^29). That is
 * the "fast form" (shifts -31..-2): per channel a multiplier, a half and a shift; the
 * output offset is added after it. Shifts -1 and above (a real multiplier >= 0.25)
 * keep the reference arithmetic.
 */
#ifndef NNRT_KERNELS_INTERNAL_REQUANT_H_
#define NNRT_KERNELS_INTERNAL_REQUANT_H_

#include <stdint.h>

#include "nnrt/kernels/quant.h"

#include "simd.h"

/** One channel's output stage, from nnrt_rqf_init(). */
typedef struct {
    int32_t mult;   /**< Q31 multiplier */
    int32_t half;   /**< fast form: 2^(rsh-1) */
    int32_t rsh;    /**< fast form: e - 1, in [1, 30] */
    int32_t shift;  /**< TFLM shift (> 0: left) */
    int32_t fast;   /**< 1: the fast form applies */
} nnrt_rqf_t;

/** 1 when a channel with this TFLM shift takes the fast form. */
static inline int nnrt_rqf_fast_shift(int32_t shift)
{
    return shift <= -2 && shift >= -31;
}

static inline void nnrt_rqf_init(nnrt_rqf_t *q, int32_t mult, int32_t shift)
{
    q->mult = mult;
    q->shift = shift;
    q->fast = nnrt_rqf_fast_shift(shift);
    q->rsh = q->fast ? -shift - 1 : 0;
    q->half = q->fast ? 1 << (q->rsh - 1) : 0;
}

/** Fast form: acc * multiplier * 2^shift (no offset, not clamped). */
static inline int32_t nnrt_rqf_fast(int32_t acc, int32_t mult, int32_t half, int32_t rsh)
{
    const int32_t s = acc >> 31;
    const uint32_t lo = ((uint32_t)s << 31) ^ 0x40000000u;
    const int64_t start = (int64_t)(((uint64_t)(uint32_t)s << 32) | lo); /* +-2^30 */
    const int64_t u = start + (int64_t)acc * mult;
    return ((int32_t)(u >> 32) + half) >> rsh;
}

/**
 * The fast form with the output offset folded in (a channel "record", prepared at build
 * time): addend = 2^(rsh-1) + (out_off << rsh), so that
 *
 *   (h + 2^(rsh-1)) >> rsh + out_off == (h + addend) >> rsh
 *
 * exactly (out_off << rsh is a multiple of 2^rsh). Valid where h + addend cannot
 * overflow: |h| <= 2^30, so addend in [-2^30, 2^30], and for rsh >= 2 (an even addend);
 * the caller checks both. The addend goes into the high word of the 64-bit start value,
 * hi = addend + (acc >> 31), whose low bit is then the sign of acc: the low word, +-2^30
 * by that sign, is 2^30 ^ (hi << 31). Not clamped.
 */
static inline int32_t nnrt_rq_fold(int32_t acc, int32_t mult, int32_t addend, int32_t rsh)
{
    const uint32_t hi = (uint32_t)addend + (uint32_t)(acc >> 31);
    const uint32_t lo = (hi << 31) ^ 0x40000000u;
    const int64_t u = (int64_t)(((uint64_t)hi << 32) | lo) + (int64_t)acc * mult;
    return (int32_t)(u >> 32) >> rsh;
}

/**
 * acc * mult * 2^-e by TFLM's two steps, for any shift e = -shift in [0, 31] and
 * mult >= 0 (no offset, not clamped): the fast form for e >= 2; for e = 1 the same fold
 * as above, floor((u + 2^31) / 2^32), in 64 bits (2^31 is not a multiple of 2^32: the
 * rounding addend goes into the start value); for e = 0 only SRDHM,
 * floor((acc * m + 2^30) / 2^31), which TFLM's nudge makes exact for both signs. One
 * 64-bit multiply-accumulate in every case (checked against the reference in
 * tests/ops/test_conv_fast.py).
 */
static inline int32_t nnrt_rq_nonpos(int32_t acc, int32_t mult, int32_t e)
{
    if (e >= 2) {
        return nnrt_rqf_fast(acc, mult, (int32_t)1 << (e - 2), e - 1);
    }
    const int64_t p = (int64_t)acc * mult;
    if (e == 1) {
        const int64_t start = (acc < 0 ? -((int64_t)1 << 30) : ((int64_t)1 << 30))
                              + ((int64_t)1 << 31);
        return (int32_t)((p + start) >> 32);
    }
    return (int32_t)((p + ((int64_t)1 << 30)) >> 31);
}

/**
 * acc * multiplier * 2^shift + output_offset by TFLM's two steps (any shift; the add
 * wraps, so it is defined for any acc: the result is clamped to int8 anyway). Out of
 * line: the kernels call it only for channels outside the fast form.
 */
int32_t nnrt_rq_ref(int32_t acc, int32_t mult, int32_t shift, int32_t out_off);

/** acc * multiplier * 2^shift + output_offset, any shift (not clamped). */
static inline int32_t nnrt_rqf(int32_t acc, const nnrt_rqf_t *q, int32_t out_off)
{
    if (q->fast) {
        return nnrt_rqf_fast(acc, q->mult, q->half, q->rsh) + out_off;
    }
    return nnrt_rq_ref(acc, q->mult, q->shift, out_off);
}

/** As nnrt_rqf(), with shifts -1 and 0 inline too (nnrt_rq_nonpos()): for loops whose
 *  one channel may have a real multiplier in [0.25, 1) (an LSTM gate's). */
static inline int32_t nnrt_rqf_nonpos(int32_t acc, const nnrt_rqf_t *q, int32_t out_off)
{
    if (q->fast) {
        return nnrt_rqf_fast(acc, q->mult, q->half, q->rsh) + out_off;
    }
    if (q->shift <= 0) {
        return nnrt_rq_nonpos(acc, q->mult, -q->shift) + out_off;
    }
    return nnrt_rq_ref(acc, q->mult, q->shift, out_off);
}

/** v clamped to [-128, 127] (one SSAT where the core has it). */
static inline int32_t nnrt_sat8(int32_t v)
{
#if NNRT_SAT
    return __ssat(v, 8);
#else
    return v < -128 ? -128 : (v > 127 ? 127 : v);
#endif
}

/** v clamped to int16 (one SSAT where the core has it). */
static inline int16_t nnrt_sat16(int32_t v)
{
#if NNRT_SAT
    return (int16_t)__ssat(v, 16);
#else
    return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
#endif
}

/** v clamped to the activation range [lo, hi] (within [-128, 127]), as int8. */
static inline int8_t nnrt_act8(int32_t v, int32_t lo, int32_t hi)
{
    v = nnrt_sat8(v);
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    return (int8_t)v;
}

#endif /* NNRT_KERNELS_INTERNAL_REQUANT_H_ */
