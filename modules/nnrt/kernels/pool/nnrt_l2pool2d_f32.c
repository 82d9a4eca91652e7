/*
 * float32 2-D L2 pooling (L2_POOL_2D), NHWC. Semantics of TFLM's reference L2Pool: sum
 * the squares of the clipped window in [y][x] order starting from 0.0f, divide by the
 * number of valid taps (as float), take sqrtf (correctly rounded, as std::sqrt), then
 * min(max(x, act_min), act_max) (internal/pool_window.h).
 */
#include <math.h>

#include "nnrt/kernels/pool.h"
#include "../internal/pool_window.h"

#define SUM_SQUARES(acc, x) ((acc) += (x) * (x))
#define ROOT_MEAN(acc, count) sqrtf((acc) / (count))
#define STORE(dst, acc, count) NNRT_POOL_F32_STORE(dst, acc, count, ROOT_MEAN)

NNRT_POOL_F32_KERNEL(nnrt_l2pool2d_f32, 0.0f, SUM_SQUARES, STORE)
