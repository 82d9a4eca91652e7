/*
 * float32 SQUARED_DIFFERENCE with broadcasting: d = in1 - in2, out = d * d (TFLM's
 * expression, no activation).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline float apply(float x1, float x2)
{
    const float d = x1 - x2;
    return d * d;
}

nnrt_status_t nnrt_squared_difference_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                          const float *input2, float *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(float, b, input1, input2, output, apply);
    return NNRT_OK;
}
