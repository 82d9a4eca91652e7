/*
 * float32 global average pool in row bands (pool.h): the partial sums carried from band
 * to band in the [y][x] order of TFLM's reference AveragePool, then sum / taps and the
 * clamp of nnrt_avgpool2d_f32 (internal/pool_rows.h).
 */
#include "nnrt/kernels/pool.h"
#include "../internal/pool_rows.h"
#include "../internal/pool_window.h"

#define MEAN(acc, count) ((acc) / (count))
#define STORE(dst, acc, count) NNRT_POOL_F32_STORE(dst, acc, count, MEAN)

NNRT_POOL_ROWS_KERNEL(nnrt_avgpool2d_rows_f32, nnrt_pool_f32_params_t, float, float, float,
                      NNRT_POOL_F32_PARAMS_BAD, STORE)
