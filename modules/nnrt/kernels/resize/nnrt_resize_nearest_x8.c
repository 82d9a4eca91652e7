/*
 * RESIZE_NEAREST_NEIGHBOR of any element type, as TFLM's reference
 * ResizeNearestNeighbor: output pixel (b, y, x) is input pixel (b, rows[y], cols[x]).
 * The source row and column of every output row and column are computed at build time
 * with TFLM's float arithmetic (GetNearestNeighbor: scale, half-pixel offset,
 * align_corners rounding), so the kernel only copies pixels.
 */
#include <string.h>

#include "nnrt/kernels/resize.h"

nnrt_status_t nnrt_resize_nearest_x8(const nnrt_resize_params_t *params, const void *input,
                                     void *output)
{
    if (params == NULL || input == NULL || output == NULL || params->rows == NULL
        || params->cols == NULL || params->batches < 1 || params->input_h < 1
        || params->input_w < 1 || params->output_h < 1 || params->output_w < 1
        || params->pixel_bytes < 1) {
        return NNRT_ERR_ARG;
    }
    for (int32_t y = 0; y < params->output_h; ++y) {
        if (params->rows[y] < 0 || params->rows[y] >= params->input_h) {
            return NNRT_ERR_ARG;
        }
    }
    for (int32_t x = 0; x < params->output_w; ++x) {
        if (params->cols[x] < 0 || params->cols[x] >= params->input_w) {
            return NNRT_ERR_ARG;
        }
    }
    const size_t px = (size_t)params->pixel_bytes;
    const size_t in_row = (size_t)params->input_w * px;
    const size_t in_image = (size_t)params->input_h * in_row;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (int32_t b = 0; b < params->batches; ++b) {
        const uint8_t *image = in + (size_t)b * in_image;
        for (int32_t y = 0; y < params->output_h; ++y) {
            const uint8_t *row = image + (size_t)params->rows[y] * in_row;
            for (int32_t x = 0; x < params->output_w; ++x) {
                memcpy(out, row + (size_t)params->cols[x] * px, px);
                out += px;
            }
        }
    }
    return NNRT_OK;
}
