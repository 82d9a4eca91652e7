/*
 * bool LOGICAL_NOT, TFLM's elementwise LogicalNot (!x). Bools are bytes holding 0 or 1.
 * Element-wise, in place capable.
 */
#include <stddef.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_logical_not_b(const bool *input, bool *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = !input[i];
    }
    return NNRT_OK;
}
