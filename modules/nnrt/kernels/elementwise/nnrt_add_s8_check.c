/*
 * The exported argument check of nnrt_add_s8() and nnrt_sub_s8() (elementwise.h): the
 * conditions the kernel tests on every call, on the parameters alone, for callers that
 * check before they run (the generated <model>_prepare(), the model loader). Its own
 * file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_add_s8_check(const nnrt_add_s8_params_t *params)
{
    return params != NULL && !NNRT_ADD_S8_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
