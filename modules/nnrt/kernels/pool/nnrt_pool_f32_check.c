/*
 * The exported argument check of the float32 max, average and L2 pools (pool.h): the
 * conditions the kernel tests on every call, on the parameters alone, for callers that
 * check before they run (the generated <model>_prepare(), the model loader). Its own
 * file, as every check.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"

nnrt_status_t nnrt_pool_f32_check(const nnrt_pool_f32_params_t *params)
{
    return params != NULL && !NNRT_POOL_F32_PARAMS_BAD(params) ? NNRT_OK : NNRT_ERR_ARG;
}
