/*
 * Byte copy for RESHAPE/SQUEEZE/EXPAND_DIMS when the planner did not alias the output
 * onto the input. memmove: overlapping (including identical) buffers are fine.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_copy_x8(const void *input, void *output, size_t bytes)
{
    if (input == NULL || output == NULL) {
        return NNRT_ERR_ARG;
    }
    if (input != output && bytes > 0) {
        memmove(output, input, bytes);
    }
    return NNRT_OK;
}
