/*
 * The exported argument check of the int16 max and average pools (pool.h): the
 * conditions the kernel tests on every call, on the parameters alone, for callers that
 * check before they run (the generated <model>_prepare(), the model loader). Its own
 * file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"

nnrt_status_t nnrt_pool_s16_check(const nnrt_pool_s8_params_t *params)
{
    return params != NULL && !NNRT_POOL_S16_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
