/*
 * The exported argument check of nnrt_add_f32(), nnrt_sub_f32() and nnrt_mul_f32()
 * (elementwise.h): the conditions the kernel tests on every call, on the parameters
 * alone, for callers that check before they run (the generated <model>_prepare(), the
 * model loader). Its own file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_binary_f32_check(const nnrt_binary_f32_params_t *params)
{
    return params != NULL && nnrt_binary_f32_params_ok(params) ? NNRT_OK : NNRT_ERR_ARG;
}
