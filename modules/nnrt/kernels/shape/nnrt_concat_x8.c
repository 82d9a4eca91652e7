/*
 * CONCATENATION of any element type, as TFLM's reference Concatenation: for each of
 * the `outer` rounds, the next contiguous block of every input in turn.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_concat_x8(const nnrt_concat_params_t *params, const void *const *inputs,
                             void *output)
{
    if (params == NULL || inputs == NULL || output == NULL || params->outer < 1
        || params->num_inputs < 1 || params->block_bytes == NULL) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < params->num_inputs; ++i) {
        if (params->block_bytes[i] < 0 || (inputs[i] == NULL && params->block_bytes[i] > 0)) {
            return NNRT_ERR_ARG;
        }
    }
    uint8_t *out = (uint8_t *)output;
    for (int32_t r = 0; r < params->outer; ++r) {
        for (int32_t i = 0; i < params->num_inputs; ++i) {
            const size_t n = (size_t)params->block_bytes[i];
            if (n > 0) {
                memcpy(out, (const uint8_t *)inputs[i] + (size_t)r * n, n);
                out += n;
            }
        }
    }
    return NNRT_OK;
}
