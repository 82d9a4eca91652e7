/*
 * Internal to the nnrt kernels: float32 dot products of one input vector with four
 * weight rows, in TFLM's reference order (each product rounded, then added to its
 * row's accumulator, input index ascending; no fused multiply-add). The float32 fully
 * connected layer and convolution use it, inlined (the accumulators stay in registers
 * across calls).
 */
#ifndef NNRT_KERNELS_INTERNAL_DOT_F32_H_
#define NNRT_KERNELS_INTERNAL_DOT_F32_H_

#include <stdint.h>

#include "simd.h"

/* VLDM blocks: a core with a single-precision FPU (Cortex-M4F, M7, M33 ...), GCC-style
 * inline assembly, Thumb-2. */
#if defined(__GNUC__) && defined(__ARM_FP) && ((__ARM_FP & 4) != 0) && defined(__thumb2__) \
    && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_VFP_DOT 1
#else
#define NNRT_VFP_DOT 0
#endif

/* input i and value i of each row into the accumulators */
#define NNRT_DOT4_F32_STEP_(i)                                                             \
    do {                                                                                   \
        const float xv_ = x[i];                                                            \
        a0 += xv_ * w0[i];                                                                 \
        a1 += xv_ * w1[i];                                                                 \
        a2 += xv_ * w2[i];                                                                 \
        a3 += xv_ * w3[i];                                                                 \
    } while (0)

/**
 * acc[r] += x[d] * w[r][d] for d = 0, 1, ... n - 1 in turn, r < 4 (the four rows side
 * by side: each input value read once). On an FPU core the blocks of four inputs run as
 * VLDM loads (the inputs and each row's four values, the pointers post-incremented: 5
 * loads per 16 products instead of 20) and the same VMUL and VADD per product, in the
 * same order per row (the rows interleaved: no row waits on its own last addition);
 * elsewhere the C loop, unrolled by four if `unroll` (a constant: what pays on a core
 * without FPU depends on the run lengths, long for the fully connected layer, short for
 * most convolutions).
 */
static NNRT_ALWAYS_INLINE void nnrt_dot4_f32(const float *x, const float *const w[4],
                                             int32_t n, float acc[4], int unroll)
{
    const float *w0 = w[0];
    const float *w1 = w[1];
    const float *w2 = w[2];
    const float *w3 = w[3];
    float a0 = acc[0];
    float a1 = acc[1];
    float a2 = acc[2];
    float a3 = acc[3];
    int32_t d = 0;
#if NNRT_VFP_DOT
    (void)unroll;
    int32_t blocks = n >> 2;
    if (blocks > 0) {
        __asm__ volatile(
            "1:\n\t"
            "vldmia %[x]!, {s0-s3}\n\t"
            "vldmia %[w0]!, {s4-s7}\n\t"
            "vldmia %[w1]!, {s8-s11}\n\t"
            "vldmia %[w2]!, {s12-s15}\n\t"
            "vldmia %[w3]!, {s16-s19}\n\t"
            "vmul.f32 s4, s0, s4\n\t"
            "vmul.f32 s8, s0, s8\n\t"
            "vmul.f32 s12, s0, s12\n\t"
            "vmul.f32 s16, s0, s16\n\t"
            "vadd.f32 %[a0], %[a0], s4\n\t"
            "vmul.f32 s5, s1, s5\n\t"
            "vadd.f32 %[a1], %[a1], s8\n\t"
            "vmul.f32 s9, s1, s9\n\t"
            "vadd.f32 %[a2], %[a2], s12\n\t"
            "vmul.f32 s13, s1, s13\n\t"
            "vadd.f32 %[a3], %[a3], s16\n\t"
            "vmul.f32 s17, s1, s17\n\t"
            "vadd.f32 %[a0], %[a0], s5\n\t"
            "vmul.f32 s6, s2, s6\n\t"
            "vadd.f32 %[a1], %[a1], s9\n\t"
            "vmul.f32 s10, s2, s10\n\t"
            "vadd.f32 %[a2], %[a2], s13\n\t"
            "vmul.f32 s14, s2, s14\n\t"
            "vadd.f32 %[a3], %[a3], s17\n\t"
            "vmul.f32 s18, s2, s18\n\t"
            "vadd.f32 %[a0], %[a0], s6\n\t"
            "vmul.f32 s7, s3, s7\n\t"
            "vadd.f32 %[a1], %[a1], s10\n\t"
            "vmul.f32 s11, s3, s11\n\t"
            "vadd.f32 %[a2], %[a2], s14\n\t"
            "vmul.f32 s15, s3, s15\n\t"
            "vadd.f32 %[a3], %[a3], s18\n\t"
            "vmul.f32 s19, s3, s19\n\t"
            "vadd.f32 %[a0], %[a0], s7\n\t"
            "vadd.f32 %[a1], %[a1], s11\n\t"
            "vadd.f32 %[a2], %[a2], s15\n\t"
            "vadd.f32 %[a3], %[a3], s19\n\t"
            "subs %[k], %[k], #1\n\t"
            "bne 1b\n\t"
            : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3),
              [k] "+r"(blocks), [a0] "+t"(a0), [a1] "+t"(a1), [a2] "+t"(a2), [a3] "+t"(a3)
            :
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
              "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "cc", "memory");
        n &= 3;
    }
#else
    for (; unroll && d + 4 <= n; d += 4) {
        NNRT_DOT4_F32_STEP_(d);
        NNRT_DOT4_F32_STEP_(d + 1);
        NNRT_DOT4_F32_STEP_(d + 2);
        NNRT_DOT4_F32_STEP_(d + 3);
    }
#endif
    for (; d < n; ++d) {
        NNRT_DOT4_F32_STEP_(d);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

#undef NNRT_DOT4_F32_STEP_

/** *acc += x[d] * w[d] for d = 0, 1, ... n - 1 in turn: one row of nnrt_dot4_f32(), in
 * the same order (for the rows of a last block of fewer than four on a core without
 * FPU, where computing unused rows would cost soft-float calls). */
static NNRT_ALWAYS_INLINE void nnrt_dot1_f32(const float *x, const float *w, int32_t n,
                                             float *acc)
{
    float a = *acc;
    for (int32_t d = 0; d < n; ++d) {
        a += x[d] * w[d];
    }
    *acc = a;
}

#endif /* NNRT_KERNELS_INTERNAL_DOT_F32_H_ */
