/*
 * The exported argument check of nnrt_strided_copy_x8() (shape.h): the conditions it
 * tests on every call, on the parameters alone, for callers that check before they run
 * (the model loader). Its own file: the kernel compiles unchanged.
 */
#include <stddef.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_strided_copy_check(const nnrt_strided_copy_params_t *params)
{
    if (params == NULL || params->rank < 1 || params->rank > NNRT_MAX_DIMS ||
        params->offset < 0 ||
        (params->elem_size != 1 && params->elem_size != 2 && params->elem_size != 4)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t d = 0; d < params->rank; ++d) {
        if (params->dims[d] < 1) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}
