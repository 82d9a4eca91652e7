/*
 * bool LOGICAL_OR with broadcasting (TFLM's logical.cc, BroadcastBinaryFunction4DSlow):
 * out = in1 || in2. Each element is written after its inputs are read (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/compare.h"
#include "../internal/binary.h"

#define LOGICAL(x, y) ((x) || (y))

nnrt_status_t nnrt_logical_or_b(const nnrt_broadcast_t *bcast, const bool *input1,
                                 const bool *input2, bool *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(bool, b, input1, input2, output, LOGICAL);
    return NNRT_OK;
}
