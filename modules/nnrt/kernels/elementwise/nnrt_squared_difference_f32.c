/*
 * float32 SQUARED_DIFFERENCE with broadcasting: d = in1 - in2, out = d * d (TFLM's
 * expression, no activation). In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline float apply(const nnrt_broadcast_t *unused, float x1, float x2)
{
    (void)unused;
    const float d = x1 - x2;
    return d * d;
}

NNRT_BINARY_KERNEL(nnrt_squared_difference_f32, nnrt_broadcast_t, float, NNRT_BINARY_BCAST_BAD,
                   NNRT_BINARY_BCAST_SELF, apply)
