/*
 * The exported argument check of the quantised SOFTMAX kernels (nnrt_softmax_s8(),
 * nnrt_softmax_s8_s16(); softmax.h): the conditions they test on every call, on the
 * parameters alone, for callers that check before they run (the model loader). Its
 * own file: the kernels compile unchanged.
 */
#include <stddef.h>

#include "nnrt/kernels/softmax.h"

nnrt_status_t nnrt_softmax_s8_check(const nnrt_softmax_s8_params_t *params, int32_t rows,
                                    int32_t depth)
{
    if (params == NULL || NNRT_SOFTMAX_S8_ARGS_BAD(params, rows, depth)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
