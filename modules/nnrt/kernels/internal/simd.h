/*
 * Internal to the nnrt kernels: which instruction set the fast kernels use, and the
 * few helpers they share. Not a public header.
 *
 * NNRT_DSP is 1 when the compiler targets a core with the Arm DSP extension
 * (__ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55 ...) and NNRT_PORTABLE_ONLY is not defined:
 * the kernels then use the ACLE SIMD intrinsics (__sxtb16, __sxtab16, __smlad,
 * __smlabb ...). Otherwise (Cortex-M0/M3, the host, or -DNNRT_PORTABLE_ONLY) the same
 * kernels run portable C99 loops with the same blocking. Both give identical results:
 * every path accumulates the same exact int32 sums and requantises them with the same
 * arithmetic (tests/ops/test_conv_fast.py checks it).
 */
#ifndef NNRT_KERNELS_INTERNAL_SIMD_H_
#define NNRT_KERNELS_INTERNAL_SIMD_H_

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && (__ARM_FEATURE_DSP == 1) && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_DSP 1
#else
#define NNRT_DSP 0
#endif

/* SSAT (Armv7-M and later, Cortex-M3 included): one-instruction clamps. */
#if defined(__ARM_FEATURE_SAT) && (__ARM_FEATURE_SAT == 1) && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_SAT 1
#else
#define NNRT_SAT 0
#endif

#if NNRT_DSP || NNRT_SAT
#include <arm_acle.h>
#endif

/* RV32 with the M extension (RV32IMAC: no SIMD, the P and V extensions are not used):
 * the register-blocked C paths of internal/rv32_*.h. -DNNRT_RV32_PATHS selects them
 * on another core too (the host's sanitizer build of tests/c/fast_kernels.c). */
#if ((defined(__riscv) && defined(__riscv_xlen) && __riscv_xlen == 32 && defined(__riscv_mul)) \
     || defined(NNRT_RV32_PATHS))                                                           \
    && !NNRT_DSP && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_RV32 1
#else
#define NNRT_RV32 0
#endif

/* Inline even when large (functions instantiated with constant arguments); or never
 * (hot loops that get their own register allocation); cold: rarely run, compiled for
 * size (reference requantisation, argument checks, remainder channels). */
#if defined(__GNUC__)
#define NNRT_ALWAYS_INLINE inline __attribute__((always_inline))
#define NNRT_NOINLINE __attribute__((noinline))
#define NNRT_COLD __attribute__((cold))
#else
#define NNRT_ALWAYS_INLINE inline
#define NNRT_NOINLINE
#define NNRT_COLD
#endif

/** 4 bytes from any address (a single LDR where unaligned access is allowed). */
static inline uint32_t nnrt_ld32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/** Store 4 bytes at any address. */
static inline void nnrt_st32(void *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

#if NNRT_DSP
/*
 * SXTB16 / SXTAB16 with the rotation the instructions have but the ACLE intrinsics of
 * GCC 12 do not expose: bytes 1 and 3 of x sign-extended into the two halfwords
 * (optionally added to the halfwords of a). One instruction each; __sxtb16(x) gives
 * bytes 0 and 2. So one 32-bit load of 4 int8 [b0 b1 b2 b3] becomes the pairs
 * [b0 b2] and [b1 b3], the order every fast kernel keeps its operands in.
 */
static inline uint32_t nnrt_sxtb16_ror8(uint32_t x)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

static inline uint32_t nnrt_sxtab16_ror8(uint32_t a, uint32_t x)
{
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
    return r;
}

/** [lo.bottom, hi.bottom] and [lo.top, hi.top]: PKHBT / PKHTB, which GCC 12 does not
 *  form from the equivalent C (it takes two instructions). */
static inline uint32_t nnrt_pkh_bottoms(uint32_t lo, uint32_t hi)
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}

static inline uint32_t nnrt_pkh_tops(uint32_t lo, uint32_t hi)
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
    return r;
}

/** Both halfwords of a packed pair set to v (a 16-bit value). */
static inline uint32_t nnrt_pair16(int32_t v)
{
    return ((uint32_t)v & 0xFFFFu) * 0x00010001u;
}
#endif

#endif /* NNRT_KERNELS_INTERNAL_SIMD_H_ */
