/*
 * int8 2-D average pooling, NHWC. Semantics of TFLM's reference AveragePool: the
 * window is clipped to the input and only the valid taps are counted; the int32 sum is
 * divided by the count rounding half away from zero, then clamped to the activation
 * range. Channels in blocks of 32 with int32 accumulators on the stack
 * (internal/pool_window.h: the pools' one window driver).
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../cmsis/nnrt_cmsis.h"
#include "../internal/pool_window.h"

#if NNRT_CMSIS_NN_ENABLED
#define HOOK(params, input, output)                                                           \
    if (nnrt_cmsis_avgpool_s8(params, input, output)) {                                       \
        return NNRT_OK;                                                                       \
    }
#else
#define HOOK NNRT_POOL_NO_HOOK
#endif

#define SUM(acc, x) ((acc) += (x))
#define STORE(dst, acc, count) NNRT_POOL_AVG_STORE_Q(int8_t, dst, acc, count)

NNRT_POOL_KERNEL(nnrt_avgpool2d_s8, nnrt_pool_s8_params_t, int8_t, int32_t, int32_t, 32,
                 NNRT_POOL_S8_PARAMS_BAD, HOOK, 0, SUM, STORE)
