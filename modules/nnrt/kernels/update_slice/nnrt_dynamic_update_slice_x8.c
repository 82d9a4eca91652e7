/*
 * DYNAMIC_UPDATE_SLICE of any element type, with TFLM's semantics (XLA's): the output
 * is the operand, then the update is copied over the block starting at the start
 * indices, each clamped into [0, operand_dim - update_dim] so the block stays inside.
 * The update is copied one innermost row at a time.
 */
#include <string.h>

#include "nnrt/kernels/update_slice.h"

nnrt_status_t nnrt_dynamic_update_slice_x8(const nnrt_update_slice_params_t *params,
                                           const void *operand, const void *update,
                                           const int32_t *start, void *output)
{
    if (operand == NULL || update == NULL || start == NULL || output == NULL
        || nnrt_update_slice_check(params) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const int32_t rank = params->rank;
    const size_t elem = (size_t)params->elem_size;
    size_t operand_bytes = elem;
    size_t rows = 1;
    size_t stride[NNRT_MAX_DIMS]; /* output element strides */
    int32_t at[NNRT_MAX_DIMS];    /* clamped start of the block */
    for (int32_t d = rank - 1; d >= 0; --d) {
        stride[d] = operand_bytes / elem;
        operand_bytes *= (size_t)params->operand_dims[d];
        if (d < rank - 1) {
            rows *= (size_t)params->update_dims[d];
        }
        const int32_t hi = params->operand_dims[d] - params->update_dims[d];
        const int32_t s = start[d];
        at[d] = s < 0 ? 0 : (s > hi ? hi : s);
    }
    if (output != operand) {
        memcpy(output, operand, operand_bytes);
    }
    const size_t row_bytes = (size_t)params->update_dims[rank - 1] * elem;
    if (row_bytes == 0) {
        return NNRT_OK;
    }
    const uint8_t *src = (const uint8_t *)update;
    uint8_t *dst = (uint8_t *)output;
    int32_t idx[NNRT_MAX_DIMS] = {0}; /* position of the row in the update's outer dims */
    for (size_t r = 0; r < rows; ++r) {
        size_t off = (size_t)at[rank - 1];
        for (int32_t d = 0; d < rank - 1; ++d) {
            off += (size_t)(at[d] + idx[d]) * stride[d];
        }
        memcpy(dst + off * elem, src + r * row_bytes, row_bytes);
        for (int32_t d = rank - 2; d >= 0; --d) {
            if (++idx[d] < params->update_dims[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    return NNRT_OK;
}
