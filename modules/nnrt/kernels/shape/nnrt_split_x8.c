/*
 * SPLIT / SPLIT_V / UNPACK of any element type, as TFLM's reference kernels: the input
 * is `outer` rows; every row holds one contiguous block per output in turn, and output
 * i receives its block of each row, row after row. An output that already is its block
 * of the input (one row, and the planner placed the output there: a view) is not
 * copied.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_split_x8(const nnrt_split_params_t *params, const void *input,
                            void *const *outputs)
{
    if (params == NULL || input == NULL || outputs == NULL || params->outer < 1
        || params->num_outputs < 1 || params->block_bytes == NULL) {
        return NNRT_ERR_ARG;
    }
    size_t row = 0;
    for (int32_t i = 0; i < params->num_outputs; ++i) {
        if (params->block_bytes[i] < 0) {
            return NNRT_ERR_ARG;
        }
        row += (size_t)params->block_bytes[i];
    }
    size_t at = 0;
    for (int32_t i = 0; i < params->num_outputs; ++i) {
        const size_t n = (size_t)params->block_bytes[i];
        uint8_t *out = (uint8_t *)outputs[i];
        const uint8_t *in = (const uint8_t *)input + at;
        if (out == NULL) {
            return NNRT_ERR_ARG;
        }
        if (n > 0 && !(params->outer == 1 && (const uint8_t *)out == in)) {
            for (int32_t r = 0; r < params->outer; ++r) {
                memcpy(out + (size_t)r * n, in + (size_t)r * row, n);
            }
        }
        at += n;
    }
    return NNRT_OK;
}
