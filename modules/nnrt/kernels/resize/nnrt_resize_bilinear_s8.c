/*
 * RESIZE_BILINEAR int8, as TFLM's reference ResizeBilinearInteger: each output value
 * blends four input pixels with weights in 1/1024 units (products in 1/2^20 units), then
 * rounds half away from zero. The source rows/columns and their fractions come from
 * build-time tables (nnopt.lowering.resize); the 32-bit accumulator is exact because
 * every fraction is in [-1024, 1024] (checked here and by the lowering), so
 * |w_lower| + |w_upper| <= 3072 along each axis and |acc| <= 128 * 3072^2 < 2^31.
 */
#include <stddef.h>

#include "nnrt/kernels/resize.h"

static int fracs_ok(const int32_t *frac, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        if (frac[i] < -1024 || frac[i] > 1024) {
            return 0;
        }
    }
    return 1;
}

nnrt_status_t nnrt_resize_bilinear_s8(const nnrt_resize_bilinear_s8_params_t *params,
                                      const int8_t *input, int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL || params->row_frac == NULL
        || params->col_frac == NULL || nnrt_resize_bilinear_check(&params->shape) != NNRT_OK
        || !fracs_ok(params->row_frac, params->shape.output_h)
        || !fracs_ok(params->col_frac, params->shape.output_w)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_resize_bilinear_shape_t *s = &params->shape;
    const size_t depth = (size_t)s->channels;
    const size_t in_row = (size_t)s->input_w * depth;
    const size_t in_image = (size_t)s->input_h * in_row;
    int8_t *out = output;
    for (int32_t b = 0; b < s->batches; ++b) {
        const int8_t *image = input + (size_t)b * in_image;
        for (int32_t y = 0; y < s->output_h; ++y) {
            const int8_t *row0 = image + (size_t)s->rows[2 * y] * in_row;
            const int8_t *row1 = image + (size_t)s->rows[2 * y + 1] * in_row;
            const int32_t fy = params->row_frac[y];
            const int32_t gy = 1024 - fy;
            for (int32_t x = 0; x < s->output_w; ++x) {
                const size_t c0 = (size_t)s->cols[2 * x] * depth;
                const size_t c1 = (size_t)s->cols[2 * x + 1] * depth;
                const int32_t fx = params->col_frac[x];
                const int32_t gx = 1024 - fx;
                const int32_t w00 = gy * gx;
                const int32_t w10 = fy * gx;
                const int32_t w01 = gy * fx;
                const int32_t w11 = fy * fx;
                const int8_t *p00 = row0 + c0;
                const int8_t *p10 = row1 + c0;
                const int8_t *p01 = row0 + c1;
                const int8_t *p11 = row1 + c1;
                for (size_t c = 0; c < depth; ++c) {
                    int32_t acc = (int32_t)p00[c] * w00 + (int32_t)p10[c] * w10
                                  + (int32_t)p01[c] * w01 + (int32_t)p11[c] * w11;
                    acc += acc > 0 ? (1 << 19) : -(1 << 19);
                    *out++ = (int8_t)(acc / (1 << 20));
                }
            }
        }
    }
    return NNRT_OK;
}
