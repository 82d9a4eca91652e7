/*
 * float32 2-D max pooling, NHWC. Semantics of TFLM's reference MaxPool: start from
 * -FLT_MAX, take `max = (max < v) ? v : max` over the clipped window, then
 * min(max(x, act_min), act_max) with the same comparison order as std::min/std::max
 * (internal/pool_window.h).
 */
#include <float.h>

#include "nnrt/kernels/pool.h"
#include "../internal/pool_window.h"

#define MAX(acc, x)                                                                           \
    if ((acc) < (x)) {                                                                        \
        (acc) = (x);                                                                          \
    }
#define ITSELF(acc, count) (acc)
#define STORE(dst, acc, count) NNRT_POOL_F32_STORE(dst, acc, count, ITSELF)

NNRT_POOL_F32_KERNEL(nnrt_maxpool2d_f32, -FLT_MAX, MAX, STORE)
