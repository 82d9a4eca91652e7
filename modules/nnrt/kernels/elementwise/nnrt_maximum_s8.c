/*
 * int8 MAXIMUM with broadcasting.
 * Raw int8 comparison, as TFLM (quantisation parameters are not used).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline int8_t apply(const nnrt_broadcast_t *unused, int8_t x1, int8_t x2)
{
    (void)unused;
    return x1 > x2 ? x1 : x2;
}

nnrt_status_t nnrt_maximum_s8(const nnrt_broadcast_t *bcast, const int8_t *input1,
                              const int8_t *input2, int8_t *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
#define OP(x1, x2) apply(bcast, x1, x2)
    NNRT_BINARY_ELEMENTS(int8_t, b, input1, input2, output, OP);
#undef OP
    return NNRT_OK;
}
