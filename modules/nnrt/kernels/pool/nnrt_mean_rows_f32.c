/*
 * float32 MEAN over rows and columns in row bands (pool.h): the partial sums carried
 * from band to band in address order, then sum / (H*W) as nnrt_mean_f32 (no clamp)
 * (internal/pool_rows.h).
 */
#include "nnrt/kernels/pool.h"
#include "../internal/pool_rows.h"

#define STORE(dst, acc, count) ((dst) = (acc) / (count))

NNRT_POOL_ROWS_KERNEL(nnrt_mean_rows_f32, nnrt_pool_f32_params_t, float, float, float,
                      NNRT_POOL_F32_PARAMS_BAD, STORE)
