/*
 * The argument check of DYNAMIC_UPDATE_SLICE's descriptor (run once by prepare() and
 * by the kernel itself).
 */
#include "nnrt/kernels/update_slice.h"

nnrt_status_t nnrt_update_slice_check(const nnrt_update_slice_params_t *params)
{
    if (params == NULL || params->rank < 1 || params->rank > NNRT_MAX_DIMS
        || (params->elem_size != 1 && params->elem_size != 2 && params->elem_size != 4)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t d = 0; d < params->rank; ++d) {
        if (params->update_dims[d] < 0 || params->update_dims[d] > params->operand_dims[d]) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}
