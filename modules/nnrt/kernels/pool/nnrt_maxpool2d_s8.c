/*
 * int8 2-D max pooling, NHWC. Semantics of TFLM's reference MaxPool: the window is
 * clipped to the input, the largest value wins (starting from -128), then the
 * activation clamp. Channels in blocks of 64 (internal/pool_window.h: the pools' one
 * window driver).
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../cmsis/nnrt_cmsis.h"
#include "../internal/pool_window.h"

#if NNRT_CMSIS_NN_ENABLED
#define HOOK(params, input, output)                                                           \
    if (nnrt_cmsis_maxpool_s8(params, input, output)) {                                       \
        return NNRT_OK;                                                                       \
    }
#else
#define HOOK NNRT_POOL_NO_HOOK
#endif

#define STORE(dst, acc, count) NNRT_POOL_MAX_STORE_Q(int8_t, dst, acc)

NNRT_POOL_KERNEL(nnrt_maxpool2d_s8, nnrt_pool_s8_params_t, int8_t, int8_t, int8_t, 64,
                 NNRT_POOL_S8_PARAMS_BAD, HOOK, INT8_MIN, NNRT_POOL_MAX_ACCUM, STORE)
