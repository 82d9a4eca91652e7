/*
 * RESIZE_BILINEAR float32, as TFLM's reference ResizeBilinear: each output value is
 * p00*wy0*wx0 + p10*wy1*wx0 + p01*wy0*wx1 + p11*wy1*wx1 + 0.0f, evaluated left to
 * right in float32 with the same operand order as TFLM (so the rounding matches). The
 * source rows/columns and the weights (1 - frac, frac) come from build-time tables
 * computed in float32 (nnopt.lowering.resize).
 */
#include <stddef.h>

#include "nnrt/kernels/resize.h"

nnrt_status_t nnrt_resize_bilinear_f32(const nnrt_resize_bilinear_f32_params_t *params,
                                       const float *input, float *output)
{
    if (params == NULL || input == NULL || output == NULL || params->row_weights == NULL
        || params->col_weights == NULL
        || nnrt_resize_bilinear_check(&params->shape) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const nnrt_resize_bilinear_shape_t *s = &params->shape;
    const size_t depth = (size_t)s->channels;
    const size_t in_row = (size_t)s->input_w * depth;
    const size_t in_image = (size_t)s->input_h * in_row;
    float *out = output;
    for (int32_t b = 0; b < s->batches; ++b) {
        const float *image = input + (size_t)b * in_image;
        for (int32_t y = 0; y < s->output_h; ++y) {
            const float *row0 = image + (size_t)s->rows[2 * y] * in_row;
            const float *row1 = image + (size_t)s->rows[2 * y + 1] * in_row;
            const float wy0 = params->row_weights[2 * y];
            const float wy1 = params->row_weights[2 * y + 1];
            for (int32_t x = 0; x < s->output_w; ++x) {
                const size_t c0 = (size_t)s->cols[2 * x] * depth;
                const size_t c1 = (size_t)s->cols[2 * x + 1] * depth;
                const float wx0 = params->col_weights[2 * x];
                const float wx1 = params->col_weights[2 * x + 1];
                const float *p00 = row0 + c0;
                const float *p10 = row1 + c0;
                const float *p01 = row0 + c1;
                const float *p11 = row1 + c1;
                for (size_t c = 0; c < depth; ++c) {
                    *out++ = p00[c] * wy0 * wx0 + p10[c] * wy1 * wx0 + p01[c] * wy0 * wx1
                             + p11[c] * wy1 * wx1 + 0.0f;
                }
            }
        }
    }
    return NNRT_OK;
}
