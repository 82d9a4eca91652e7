/*
 * int8 1x1 convolution (pointwise), any stride, no padding: a matrix product of the
 * input pixels [N*OH*OW, C] and the filter [OC, C], two pixels at a time through the
 * shared matrix core with the caller's scratch (internal/nnrt_conv_gemm_s8.c).
 * Bit-exact with nnrt_conv2d_s8().
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/conv_gemm.h"
#include "../internal/gemm.h"
#include "../cmsis/nnrt_cmsis.h"

size_t nnrt_conv2d_1x1_s8_get_buffer_size(const nnrt_conv_s8_params_t *params)
{
    return params == NULL ? 0 : NNRT_GEMM_COLS_BYTES(params->geom.input_c);
}

nnrt_status_t nnrt_conv2d_1x1_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output,
                                 void *scratch)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0) || scratch == NULL
        || ((uintptr_t)scratch & 3u) != 0) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    if (g->filter_h != 1 || g->filter_w != 1 || g->filter_c != g->input_c
        || g->pad_top != 0 || g->pad_left != 0 || params->pool != NULL
        || (int64_t)(g->output_h - 1) * g->stride_h >= g->input_h
        || (int64_t)(g->output_w - 1) * g->stride_w >= g->input_w) {
        return NNRT_ERR_ARG; /* (then nnrt_conv_gemm_bytes() == the size above) */
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_conv_s8(params, input, filter, bias, output, scratch,
                           nnrt_conv2d_1x1_s8_get_buffer_size(params))) {
        return NNRT_OK;
    }
#endif
    nnrt_conv_gemm_s8(params, input, filter, bias, output, scratch, 0);
    return NNRT_OK;
}
