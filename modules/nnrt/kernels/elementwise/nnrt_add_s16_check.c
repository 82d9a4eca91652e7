/*
 * The exported argument check of nnrt_add_s16() and nnrt_sub_s16() (elementwise.h): the
 * conditions the kernel tests on every call, on the parameters alone, for callers that
 * check before they run (the generated <model>_prepare(), the model loader). Its own
 * file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_add_s16_check(const nnrt_add_s8_params_t *params)
{
    return params != NULL && !NNRT_ADD_S16_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
