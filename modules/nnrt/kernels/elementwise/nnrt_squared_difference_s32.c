/*
 * int32 SQUARED_DIFFERENCE with broadcasting: d = in1 - in2, out = d * d in 32-bit
 * two's complement arithmetic (TFLM's int32 expression; computed unsigned here so that
 * a wrap is defined behaviour in C). In place as the other binary kernels.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline int32_t apply(int32_t x1, int32_t x2)
{
    const uint32_t d = (uint32_t)x1 - (uint32_t)x2;
    return (int32_t)(d * d);
}

nnrt_status_t nnrt_squared_difference_s32(const nnrt_broadcast_t *bcast, const int32_t *input1,
                                          const int32_t *input2, int32_t *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(int32_t, b, input1, input2, output, apply);
    return NNRT_OK;
}
