/*
 * int32 DIV with broadcasting, as TFLM's div.cc (EvalDiv<int32_t>, reference Div): the C
 * quotient (truncated toward zero) clamped to the int32 activation range. TFLM leaves a
 * zero divisor and INT32_MIN / -1 undefined (a trap on most hosts); here they give 0 and
 * INT32_MIN. In place as the binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int32_t apply(const nnrt_binary_s32_params_t *p, int32_t x1, int32_t x2)
{
    int32_t q;
    if (x2 == 0) {
        q = 0;
    } else if (x2 == -1) {
        q = (int32_t)(0u - (uint32_t)x1);
    } else {
        q = x1 / x2;
    }
    return nnrt_clamp_i32(q, p->act_min, p->act_max);
}

NNRT_BINARY_KERNEL(nnrt_div_s32, nnrt_binary_s32_params_t, int32_t, NNRT_BINARY_S32_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
