/*
 * Internal to the nnrt kernels: the Helium (MVE) int8 ADD (nnrt_add_s8() takes it first
 * on MVE cores), compiled only where NNRT_MVE (internal/mve.h).
 *
 * TFLM's arithmetic (add.cc) on 4 elements per int32 vector: each input widened by
 * VLDRB.S32 (or broadcast), offset, shifted left by left_shift (VSHL, wrapping as
 * TFLM's int32 multiply by 2^left_shift), rescaled by its multiplier in TFLM's two
 * steps (VQRDMULH is SRDHM; the rounding division by 2^-shift: a negative value lowered
 * by one first, then VRSHL, which rounds half up: half away from zero together), the
 * sum rescaled the same way, offset, clamped, stored by VSTRB.32; the row's last 1-3
 * elements VCTP-predicated. Any multiplier and shift the parameter check accepts.
 */
#ifndef NNRT_KERNELS_INTERNAL_MVE_ADD_H_
#define NNRT_KERNELS_INTERNAL_MVE_ADD_H_

#include "mve.h"

#if NNRT_MVE
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/elementwise.h"

#include "binary.h"
#include "simd.h"

/* x * m * 2^e by TFLM's two steps, e <= 0 (en: e as a vector, for the sign fix-up). */
static NNRT_ALWAYS_INLINE int32x4_t nnrt_mve_rq_n(int32x4_t x, int32_t m, int32_t e,
                                                  int32x4_t en)
{
    int32x4_t y = vqrdmulhq_n_s32(x, m);
    y = vqaddq_s32(y, vshrq_n_s32(vandq_s32(y, en), 31));
    return vrshlq_n_s32(y, e);
}

/** int8 ADD of checked params: returns 1 when done, 0 (nothing written) where an input's
 *  innermost stride is neither 0 nor 1. */
static NNRT_NOINLINE int nnrt_mve_add_s8(const nnrt_add_s8_params_t *params,
                                         const int8_t *input1, const int8_t *input2,
                                         int8_t *output)
{
    const nnrt_broadcast_t *b = &params->bcast;
    NNRT_BINARY_ROW_GEOMETRY(b);
    if ((s1 != 0 && s1 != 1) || (s2 != 0 && s2 != 1)) {
        return 0;
    }
    const int32_t off1 = params->input1_offset;
    const int32_t off2 = params->input2_offset;
    const int32_t ls = params->left_shift;
    const int32_t m1 = params->input1_multiplier;
    const int32_t m2 = params->input2_multiplier;
    const int32_t mo = params->output_multiplier;
    const int32_t e1 = params->input1_shift;
    const int32_t e2 = params->input2_shift;
    const int32_t eo = params->output_shift;
    const int32_t out_off = params->output_offset;
    const int32x4_t e1v = vdupq_n_s32(e1);
    const int32x4_t e2v = vdupq_n_s32(e2);
    const int32x4_t eov = vdupq_n_s32(eo);
    const int32x4_t lo = vdupq_n_s32(params->act_min);
    const int32x4_t hi = vdupq_n_s32(params->act_max);
    NNRT_BINARY_WALK(int8_t, b, input1, input2, output,
        for (int32_t i = 0; i < n; i += 4) {
            const mve_pred16_t p = vctp32q((uint32_t)(n - i));
            const int32x4_t x1 = s1 != 0 ? vldrbq_z_s32(a + i, p) : vdupq_n_s32(a[0]);
            const int32x4_t x2 = s2 != 0 ? vldrbq_z_s32(c + i, p) : vdupq_n_s32(c[0]);
            const int32x4_t y1 = nnrt_mve_rq_n(vshlq_r_s32(vaddq_n_s32(x1, off1), ls), m1,
                                               e1, e1v);
            const int32x4_t y2 = nnrt_mve_rq_n(vshlq_r_s32(vaddq_n_s32(x2, off2), ls), m2,
                                               e2, e2v);
            const int32x4_t r =
                vaddq_n_s32(nnrt_mve_rq_n(vaddq_s32(y1, y2), mo, eo, eov), out_off);
            vstrbq_p_s32(output + i, vminq_s32(vmaxq_s32(r, lo), hi), p);
        });
    return 1;
}

#endif /* NNRT_MVE */

#endif /* NNRT_KERNELS_INTERNAL_MVE_ADD_H_ */
