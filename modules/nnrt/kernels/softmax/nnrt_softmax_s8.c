/* SOFTMAX int8 -> int8 (TFLM reference_ops::Softmax<int8_t, int8_t>). */

/* Compiled for size: softmax runs once per inference on one row of a few classes, so
 * its time is negligible, but at -O2 the 64-bit fixed-point multiplies of the exp and
 * reciprocal series inline a dozen times (1,396 bytes instead of 700 on Cortex-M7).
 * Before the includes, so that the inline helpers of fixedpoint.h get it too. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("Os")
#endif
#include "nnrt/kernels/softmax.h"
#include "../cmsis/nnrt_cmsis.h"
#include "../internal/softmax_s8.h"

#if NNRT_CMSIS_NN_ENABLED
#define HOOK(params, input, output, rows, depth)                                              \
    if (nnrt_cmsis_softmax_s8(params, input, output, rows, depth)) {                          \
        return NNRT_OK;                                                                       \
    }
#else
#define HOOK NNRT_SOFTMAX_NO_HOOK
#endif

NNRT_SOFTMAX_S8_KERNEL(nnrt_softmax_s8, int8_t, 8, INT8_MIN, INT8_MAX, HOOK)
