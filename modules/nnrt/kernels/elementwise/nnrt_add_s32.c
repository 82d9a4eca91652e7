/*
 * int32 ADD with broadcasting, as TFLM's int32 reference Add (add.cc, EvalAdd<int32_t>):
 * the sum (computed unsigned here, so that a wrap is defined behaviour in C) clamped to
 * the int32 activation range. In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int32_t apply(const nnrt_binary_s32_params_t *p, int32_t x1, int32_t x2)
{
    return nnrt_clamp_i32((int32_t)((uint32_t)x1 + (uint32_t)x2), p->act_min, p->act_max);
}

NNRT_BINARY_KERNEL(nnrt_add_s32, nnrt_binary_s32_params_t, int32_t, NNRT_BINARY_S32_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
