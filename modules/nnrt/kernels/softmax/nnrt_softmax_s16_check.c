/*
 * The exported argument check of the int16 SOFTMAX kernel (nnrt_softmax_s16();
 * softmax.h): the condition it tests on every call, on the parameters alone, for
 * callers that check before they run (the model loader). Its own file: the kernel
 * compiles unchanged.
 */
#include <stddef.h>

#include "nnrt/kernels/softmax.h"

nnrt_status_t nnrt_softmax_s16_check(const nnrt_softmax_s16_params_t *params, int32_t rows,
                                     int32_t depth)
{
    if (params == NULL || NNRT_SOFTMAX_S16_ARGS_BAD(params, rows, depth)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
