/*
 * int8 global average pool in row bands (pool.h): int32 partial sums carried from band
 * to band, then the rounded mean and clamp of nnrt_avgpool2d_s8 (internal/pool_rows.h).
 */
#include "nnrt/kernels/pool.h"
#include "../internal/pool_rows.h"
#include "../internal/pool_window.h"

#define STORE(dst, acc, count) NNRT_POOL_AVG_STORE_Q(int8_t, dst, acc, count)

NNRT_POOL_ROWS_KERNEL(nnrt_avgpool2d_rows_s8, nnrt_pool_s8_params_t, int8_t, int32_t, int32_t,
                      NNRT_POOL_S8_PARAMS_BAD, STORE)
