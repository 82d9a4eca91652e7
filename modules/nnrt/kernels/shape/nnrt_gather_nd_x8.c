/*
 * GATHER_ND of any element type, as TFLM's reference GatherNd: slice i of the output
 * is the input slice at the nd-tuple of indices i. Every index is checked against its
 * dimension (TFLM fails the invocation on an index out of range: so does this kernel).
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_gather_nd_x8(const nnrt_gather_nd_params_t *params, const void *input,
                                const int32_t *indices, void *output)
{
    if (params == NULL || input == NULL || indices == NULL || output == NULL
        || params->n_slices < 0 || params->nd < 1 || params->nd > NNRT_MAX_DIMS
        || params->slice_bytes < 0) {
        return NNRT_ERR_ARG;
    }
    const size_t slice = (size_t)params->slice_bytes;
    uint8_t *out = (uint8_t *)output;
    for (int32_t i = 0; i < params->n_slices; ++i) {
        size_t from = 0;
        for (int32_t j = 0; j < params->nd; ++j) {
            const int32_t v = indices[(size_t)i * (size_t)params->nd + (size_t)j];
            if (v < 0 || v >= params->dims[j]) {
                return NNRT_ERR_ARG;
            }
            from += (size_t)v * (size_t)params->strides[j];
        }
        memcpy(out + (size_t)i * slice, (const uint8_t *)input + from, slice);
    }
    return NNRT_OK;
}
