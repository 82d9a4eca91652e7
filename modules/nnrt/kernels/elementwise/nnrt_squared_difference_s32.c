/*
 * int32 SQUARED_DIFFERENCE with broadcasting: d = in1 - in2, out = d * d in 32-bit
 * two's complement arithmetic (TFLM's int32 expression; computed unsigned here so that
 * a wrap is defined behaviour in C). In place as the other binary kernels.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline int32_t apply(const nnrt_broadcast_t *unused, int32_t x1, int32_t x2)
{
    (void)unused;
    const uint32_t d = (uint32_t)x1 - (uint32_t)x2;
    return (int32_t)(d * d);
}

NNRT_BINARY_KERNEL(nnrt_squared_difference_s32, nnrt_broadcast_t, int32_t,
                   NNRT_BINARY_BCAST_BAD, NNRT_BINARY_BCAST_SELF, apply)
