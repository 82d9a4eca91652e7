/*
 * The exported argument check of the int8 convolution kernels (conv.h): the
 * conditions of internal/conv_check.h on the parameters alone, for callers that check
 * before they run (the model loader). Its own file: the kernels' copy
 * (nnrt_conv_s8_args_ok()) compiles unchanged.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"

nnrt_status_t nnrt_conv_s8_check(const nnrt_conv_s8_params_t *params, int depthwise)
{
    if (params == NULL || NNRT_CONV_S8_PARAMS_BAD(params, depthwise) || NNRT_CONV_S8_POOL_BAD(params->pool)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
