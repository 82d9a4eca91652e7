/*
 * The exported argument check of nnrt_mul_s16() (elementwise.h): the conditions the
 * kernel tests on every call, on the parameters alone, for callers that check before
 * they run (the generated <model>_prepare(), the model loader). Its own file, as every
 * check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_mul_s16_check(const nnrt_mul_s8_params_t *params)
{
    return params != NULL && !NNRT_MUL_S16_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
