/*
 * int16 average pool (TFLM's AveragePoolingEvalQuantized<int16_t>: reference_integer_ops
 * AveragePool on int16), NHWC, the window driver of internal/pool_window.h: the int32 sum
 * of the valid taps divided by their count, rounded half away from zero (C99 division
 * truncates toward zero, as TFLM relies on), clamped to the activation range.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../internal/pool_window.h"

#define SUM(acc, x) ((acc) += (x))
#define STORE(dst, acc, count) NNRT_POOL_AVG_STORE_Q(int16_t, dst, acc, count)

NNRT_POOL_KERNEL(nnrt_avgpool2d_s16, nnrt_pool_s8_params_t, int16_t, int32_t, int32_t, 32,
                 NNRT_POOL_S16_PARAMS_BAD, NNRT_POOL_NO_HOOK, 0, SUM, STORE)
