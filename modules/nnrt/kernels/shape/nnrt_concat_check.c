/*
 * The exported argument check of nnrt_concat_x8() (shape.h): the conditions it tests
 * on every call, on the parameters alone, for callers that check before they run (the
 * model loader). Its own file: the kernel compiles unchanged.
 */
#include <stddef.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_concat_check(const nnrt_concat_params_t *params)
{
    if (params == NULL || params->outer < 1 || params->num_inputs < 1 ||
        params->block_bytes == NULL) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < params->num_inputs; ++i) {
        if (params->block_bytes[i] < 0) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}
