/*
 * GATHER of any element type, as TFLM's reference Gather: for every batch, outer
 * index and coordinate, the input block at that coordinate along the axis. Each
 * coordinate is checked against the axis extent (TFLM fails the invocation on one out
 * of range: so does this kernel, before writing the block).
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_gather_x8(const nnrt_gather_params_t *params, const void *input,
                             const int32_t *coords, void *output)
{
    if (params == NULL || input == NULL || coords == NULL || output == NULL
        || params->batch < 1 || params->outer < 1 || params->axis_size < 1
        || params->coord_size < 0 || params->inner_bytes < 0) {
        return NNRT_ERR_ARG;
    }
    const size_t inner = (size_t)params->inner_bytes;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (int32_t b = 0; b < params->batch; ++b) {
        for (int32_t o = 0; o < params->outer; ++o) {
            const size_t row = (size_t)b * (size_t)params->outer + (size_t)o;
            for (int32_t c = 0; c < params->coord_size; ++c) {
                const int32_t v = coords[(size_t)b * (size_t)params->coord_size + (size_t)c];
                if (v < 0 || v >= params->axis_size) {
                    return NNRT_ERR_ARG;
                }
                memcpy(out + (row * (size_t)params->coord_size + (size_t)c) * inner,
                       in + (row * (size_t)params->axis_size + (size_t)v) * inner, inner);
            }
        }
    }
    return NNRT_OK;
}
