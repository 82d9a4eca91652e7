/*
 * int16 max pool (TFLM's MaxPoolingEvalQuantized<int16_t>), NHWC, the window driver of
 * internal/pool_window.h: the largest valid tap, clamped to the activation range.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../internal/pool_window.h"

#define STORE(dst, acc, count) NNRT_POOL_MAX_STORE_Q(int16_t, dst, acc)

NNRT_POOL_KERNEL(nnrt_maxpool2d_s16, nnrt_pool_s8_params_t, int16_t, int16_t, int16_t, 64,
                 NNRT_POOL_S16_PARAMS_BAD, NNRT_POOL_NO_HOOK, INT16_MIN, NNRT_POOL_MAX_ACCUM, STORE)
