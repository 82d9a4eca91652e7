/*
 * float32 MINIMUM with broadcasting.
 * out = in1 < in2 ? in1 : in2, exactly TFLM's expression.
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline float apply(const nnrt_broadcast_t *unused, float x1, float x2)
{
    (void)unused;
    return x1 < x2 ? x1 : x2;
}

nnrt_status_t nnrt_minimum_f32(const nnrt_broadcast_t *bcast, const float *input1,
                               const float *input2, float *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
#define OP(x1, x2) apply(bcast, x1, x2)
    NNRT_BINARY_ELEMENTS(float, b, input1, input2, output, OP);
#undef OP
    return NNRT_OK;
}
