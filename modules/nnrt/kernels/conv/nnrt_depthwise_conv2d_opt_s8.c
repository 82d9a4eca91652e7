/*
 * int8 depthwise convolution without a fused pool: the fast path of
 * internal/nnrt_dw_s8.c on its own, so that a firmware whose depthwise ops have no
 * fused pool does not link the reference loops of nnrt_depthwise_conv2d_s8().
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/dw.h"
#include "../cmsis/nnrt_cmsis.h"

nnrt_status_t nnrt_depthwise_conv2d_opt_s8(const nnrt_conv_s8_params_t *params,
                                           const int8_t *input, const int8_t *filter,
                                           const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 1) || params->pool != NULL
        || (int64_t)params->geom.filter_h * params->geom.filter_w > NNRT_DW_MAX_TAPS) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_depthwise_conv_s8(params, input, filter, bias, output)) {
        return NNRT_OK;
    }
#endif
    nnrt_dw_fast_s8(params, input, filter, bias, output);
    return NNRT_OK;
}
