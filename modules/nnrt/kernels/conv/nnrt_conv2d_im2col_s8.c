/*
 * int8 convolution of any kernel size, stride, dilation and padding (one group) through
 * im2col and the 2-pixel x 2-channel matrix core, with the caller's scratch: see
 * internal/nnrt_conv_gemm_s8.c. Bit-exact with nnrt_conv2d_s8().
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/conv_gemm.h"
#include "../cmsis/nnrt_cmsis.h"

size_t nnrt_conv2d_im2col_s8_get_buffer_size(const nnrt_conv_s8_params_t *params)
{
    return params == NULL ? 0 : nnrt_conv_gemm_bytes(&params->geom);
}

nnrt_status_t nnrt_conv2d_im2col_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                    const int8_t *filter, const int32_t *bias, int8_t *output,
                                    void *scratch)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0) || scratch == NULL
        || ((uintptr_t)scratch & 3u) != 0) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    if (g->filter_c != g->input_c || params->pool != NULL
        || (int64_t)g->filter_h * g->filter_w * g->input_c > INT32_MAX / 2) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_conv_s8(params, input, filter, bias, output, scratch,
                           nnrt_conv2d_im2col_s8_get_buffer_size(params))) {
        return NNRT_OK;
    }
#endif
    nnrt_conv_gemm_s8(params, input, filter, bias, output, scratch, 0);
    return NNRT_OK;
}
