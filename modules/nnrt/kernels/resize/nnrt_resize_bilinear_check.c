/*
 * Validation of a bilinear resize descriptor (shared by the int8 and float32 kernels):
 * positive extents, and every source row/column pair ordered and inside the input.
 */
#include <stddef.h>

#include "nnrt/kernels/resize.h"

static int pairs_ok(const int32_t *pairs, int32_t n, int32_t limit)
{
    for (int32_t i = 0; i < n; ++i) {
        const int32_t lo = pairs[2 * i];
        const int32_t hi = pairs[2 * i + 1];
        if (lo < 0 || hi < lo || hi >= limit) {
            return 0;
        }
    }
    return 1;
}

nnrt_status_t nnrt_resize_bilinear_check(const nnrt_resize_bilinear_shape_t *shape)
{
    if (shape == NULL || shape->rows == NULL || shape->cols == NULL || shape->batches < 1
        || shape->input_h < 1 || shape->input_w < 1 || shape->output_h < 1
        || shape->output_w < 1 || shape->channels < 1) {
        return NNRT_ERR_ARG;
    }
    if (!pairs_ok(shape->rows, shape->output_h, shape->input_h)
        || !pairs_ok(shape->cols, shape->output_w, shape->input_w)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
