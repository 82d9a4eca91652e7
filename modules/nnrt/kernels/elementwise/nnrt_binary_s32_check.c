/*
 * The exported argument check of nnrt_add_s32(), nnrt_mul_s32() and nnrt_div_s32()
 * (elementwise.h): the conditions the kernel tests on every call, on the parameters
 * alone, for callers that check before they run (the generated <model>_prepare(), the
 * model loader). Its own file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_binary_s32_check(const nnrt_binary_s32_params_t *params)
{
    return params != NULL && !NNRT_BINARY_S32_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
