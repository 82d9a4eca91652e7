/*
 * int8 convolution with one group and no fused pool, without scratch: the matrix core
 * of nnrt_conv2d_im2col_s8() with its columns placed in the part of the output not
 * written yet (no extra memory; internal/conv_gemm.h); the last pixels, for which that
 * space runs out, with their columns on the stack where they fit
 * (nnrt_conv_gemm_tail_fits()), else one at a time (internal/conv_pixel.h). Bit-exact
 * with nnrt_conv2d_s8().
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/conv_gemm.h"
#include "../internal/conv_pixel.h"
#include "../cmsis/nnrt_cmsis.h"

nnrt_status_t nnrt_conv2d_opt_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0) || params->pool != NULL
        || params->geom.filter_c != params->geom.input_c) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_conv_s8(params, input, filter, bias, output, NULL, 0)) {
        return NNRT_OK;
    }
#endif
    const nnrt_conv_geom_t *g = &params->geom;
    size_t done = 0;
    if ((int64_t)g->filter_h * g->filter_w * g->input_c <= INT32_MAX / 2) {
        done = nnrt_conv_gemm_s8(params, input, filter, bias, output, NULL, 0);
        /* the last pixels, where the output has no room for the columns any more: their
         * columns on the stack where they fit */
        if (nnrt_conv_gemm_tail_fits(g, nnrt_conv_gemm_bytes(g), done)) {
            uint32_t cols[NNRT_CONV_TAIL_STACK_BYTES / 4]; /* 4-byte aligned */
            done = nnrt_conv_gemm_s8(params, input, filter, bias, output, cols, done);
        }
    }
    /* the rest one at a time */
    nnrt_conv_pixels_from(params, input, filter, bias, NULL, output, done);
    return NNRT_OK;
}
