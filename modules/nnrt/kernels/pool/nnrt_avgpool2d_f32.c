/*
 * float32 2-D average pooling, NHWC. Semantics of TFLM's reference AveragePool: sum
 * the clipped window in [y][x] order starting from 0.0f, divide by the number of valid
 * taps (as float), then min(max(x, act_min), act_max) (internal/pool_window.h).
 */
#include "nnrt/kernels/pool.h"
#include "../internal/pool_window.h"

#define SUM(acc, x) ((acc) += (x))
#define MEAN(acc, count) ((acc) / (count))
#define STORE(dst, acc, count) NNRT_POOL_F32_STORE(dst, acc, count, MEAN)

NNRT_POOL_F32_KERNEL(nnrt_avgpool2d_f32, 0.0f, SUM, STORE)
