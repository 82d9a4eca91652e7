/*
 * Dense copy of a strided view of the input (TRANSPOSE, SLICE, STRIDED_SLICE): the
 * output is written in row-major order; rows whose elements are adjacent in the input
 * are copied with one memcpy, others element by element. A contiguous slice whose
 * output already is that byte range of the input (a view the planner made) is left.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_strided_copy_x8(const nnrt_strided_copy_params_t *params, const void *input,
                                   void *output)
{
    if (params == NULL || input == NULL || output == NULL || params->rank < 1
        || params->rank > NNRT_MAX_DIMS || params->offset < 0
        || (params->elem_size != 1 && params->elem_size != 2 && params->elem_size != 4)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t d = 0; d < params->rank; ++d) {
        if (params->dims[d] < 1) {
            return NNRT_ERR_ARG;
        }
    }
    const int32_t last = params->rank - 1;
    const size_t n = (size_t)params->dims[last];
    const ptrdiff_t s = params->strides[last];
    const size_t es = (size_t)params->elem_size;
    const uint8_t *row = (const uint8_t *)input + params->offset;
    uint8_t *out = (uint8_t *)output;
    if (params->rank == 1 && s == (ptrdiff_t)es && out == row) {
        return NNRT_OK; /* a contiguous slice the planner placed as a view: in place */
    }
    int32_t idx[NNRT_MAX_DIMS] = {0};

    for (;;) {
        if (s == (ptrdiff_t)es) {
            memcpy(out, row, n * es);
        } else if (es == 1) {
            for (size_t i = 0; i < n; ++i) {
                out[i] = row[(ptrdiff_t)i * s];
            }
        } else if (es == 2) {
            for (size_t i = 0; i < n; ++i) {
                memcpy(out + 2 * i, row + (ptrdiff_t)i * s, 2);
            }
        } else {
            for (size_t i = 0; i < n; ++i) {
                memcpy(out + 4 * i, row + (ptrdiff_t)i * s, 4);
            }
        }
        out += n * es;
        int32_t d = last - 1;
        for (; d >= 0; --d) {
            row += params->strides[d];
            if (++idx[d] < params->dims[d]) {
                break;
            }
            row -= (ptrdiff_t)params->strides[d] * params->dims[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return NNRT_OK;
        }
    }
}
