/*
 * The reference requantisation of one channel pair of the int8 matrix core (a channel
 * outside the fast form), out of line and cold. Its own file: the core's bodies
 * (internal/gemm_body.h) call it, and the core's file (nnrt_gemm_s8.c) includes those
 * bodies, so defining it there made an include/call circle.
 */
#include <stdint.h>

#include "gemm.h"
#include "requant.h"
#include "simd.h"

NNRT_COLD NNRT_NOINLINE void nnrt_gemm_pair_ref(const nnrt_gemm_s8_t *g, int32_t oc, int32_t d,
                                                int32_t a00, int32_t a01, int32_t a10,
                                                int32_t a11, int8_t *out0, int8_t *out1)
{
    const int32_t a[4] = {a00, a01, a10, a11};
    for (int32_t i = 0; i <= d; ++i) {
        const int32_t qi = g->per_channel ? oc + i : 0;
        const int32_t m = g->multiplier[qi];
        const int32_t s = g->shift[qi];
        const int32_t v0 = nnrt_rq_ref(a[2 * i], m, s, g->output_offset);
        const int32_t v1 = nnrt_rq_ref(a[2 * i + 1], m, s, g->output_offset);
        out0[oc + i] = nnrt_act8(v0, g->act_min, g->act_max);
        out1[oc + i] = nnrt_act8(v1, g->act_min, g->act_max);
    }
}
