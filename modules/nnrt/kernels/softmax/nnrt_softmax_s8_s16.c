/* SOFTMAX int8 -> int16 (TFLM reference_ops::Softmax<int8_t, int16_t>). */

/* Compiled for size: softmax runs once per inference on one row of a few classes, so
 * its time is negligible, but at -O2 the 64-bit fixed-point multiplies of the exp and
 * reciprocal series inline a dozen times (1,396 bytes instead of 700 on Cortex-M7).
 * Before the includes, so that the inline helpers of fixedpoint.h get it too. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("Os")
#endif
#include "nnrt/kernels/softmax.h"
#include "../internal/softmax_s8.h"

NNRT_SOFTMAX_S8_KERNEL(nnrt_softmax_s8_s16, int16_t, 16, INT16_MIN, INT16_MAX,
                       NNRT_SOFTMAX_NO_HOOK)
