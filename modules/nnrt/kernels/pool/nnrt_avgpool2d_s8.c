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
/* C99 division truncates toward zero, as TFLM relies on. */
#define STORE(dst, acc, count)                                                                \
    do {                                                                                      \
        int32_t v_ = (acc) > 0 ? ((acc) + (count) / 2) / (count)                              \
                               : ((acc) - (count) / 2) / (count);                             \
        v_ = v_ < act_min ? act_min : v_;                                                     \
        (dst) = (int8_t)(v_ > act_max ? act_max : v_);                                        \
    } while (0)

NNRT_POOL_KERNEL(nnrt_avgpool2d_s8, nnrt_pool_s8_params_t, int8_t, int32_t, int32_t, 32,
                 NNRT_POOL_S8_PARAMS_BAD, HOOK, 0, SUM, STORE)
