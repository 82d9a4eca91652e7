/*
 * Internal to the nnrt kernels: the channel loop of the int8 matrix core on RV32IM
 * (NNRT_RV32, internal/simd.h): a pixel pair's channels in blocks of 4 through
 * nnrt_rv_gemm_mac_2x4() (internal/rv32_gemm.h). Included by internal/gemm_body.h only,
 * after the output stage it reuses (nnrt_gemm_out_pair(), nnrt_gemm_put4(),
 * nnrt_gemm_pair1(), nnrt_gemm_pair1_rq()).
 */
#ifndef NNRT_KERNELS_INTERNAL_RV32_GEMM_PAIRS_H_
#define NNRT_KERNELS_INTERNAL_RV32_GEMM_PAIRS_H_

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "rv32_gemm.h"
#include "simd.h"

#if NNRT_RV32

/*
 * Channels [oc0, n) of one pixel pair for the core g: blocks of 4 channels, then the
 * last pair and an odd last channel through nnrt_gemm_pair1() / nnrt_gemm_pair1_rq().
 * rq: 1 the channel records of g (nnrt_gemm_pair_body_rq()), 0 bias / multiplier /
 * shift with all_fast as for nnrt_gemm_pair1().
 */
static NNRT_ALWAYS_INLINE void nnrt_rv_gemm_pairs(const nnrt_gemm_s8_t *g,
                                                  const nnrt_gemm_pass_t *x, int32_t oc0,
                                                  int32_t n, int all_fast, int rq)
{
    /* locals: the byte stores may alias *x, which would be reloaded after each */
    const void *const cols = x->cols;
    int8_t *const out0 = x->out0;
    int8_t *const out1 = x->out1;
    const int32_t k = g->k;
    int32_t oc = oc0;
    for (; oc + 4 <= n; oc += 4) {
        /* the biases (written out: GCC kept a loop here, through the stack) */
        int32_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        if (rq) {
            b0 = nnrt_gemm_rq_bias(g->rq, oc);
            b1 = nnrt_gemm_rq_bias(g->rq, oc + 1);
            b2 = nnrt_gemm_rq_bias(g->rq, oc + 2);
            b3 = nnrt_gemm_rq_bias(g->rq, oc + 3);
        } else if (g->bias != NULL) {
            b0 = g->bias[oc];
            b1 = g->bias[oc + 1];
            b2 = g->bias[oc + 2];
            b3 = g->bias[oc + 3];
        }
        int32_t a[8] = {b0, b0, b1, b1, b2, b2, b3, b3};
        nnrt_rv_gemm_mac_2x4(cols, k, g->filter + (size_t)oc * (size_t)k, a);
        for (int32_t c = 0; c < 4; c += 2) {
            if (rq) {
                const int32_t *r0 = nnrt_gemm_rq_ch(g->rq, oc + c);
                const int32_t *r1 = nnrt_gemm_rq_ch(g->rq, oc + c + 1);
                nnrt_gemm_put4(g, nnrt_gemm_rq_out(a[2 * c], r0),
                               nnrt_gemm_rq_out(a[2 * c + 1], r0),
                               nnrt_gemm_rq_out(a[2 * c + 2], r1),
                               nnrt_gemm_rq_out(a[2 * c + 3], r1), out0, out1, oc + c,
                               oc + c + 1);
            } else {
                nnrt_gemm_out_pair(g, &a[2 * c], out0, out1, oc + c, 1, all_fast);
            }
        }
    }
    for (; oc < n; oc += 2) {
        const int32_t d = oc + 1 < n ? 1 : 0;
        if (rq) {
            nnrt_gemm_pair1_rq(g, cols, out0, out1, oc, d);
        } else {
            nnrt_gemm_pair1(g, cols, out0, out1, oc, d, all_fast);
        }
    }
}

#endif /* NNRT_RV32 */

#endif /* NNRT_KERNELS_INTERNAL_RV32_GEMM_PAIRS_H_ */
