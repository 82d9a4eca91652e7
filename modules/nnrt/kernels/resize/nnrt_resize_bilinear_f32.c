/*
 * RESIZE_BILINEAR float32, as TFLM's reference ResizeBilinear: each output value is
 * p00*wy0*wx0 + p10*wy1*wx0 + p01*wy0*wx1 + p11*wy1*wx1 + 0.0f, evaluated left to
 * right in float32 with the same operand order as TFLM (so the rounding matches). The
 * source rows/columns and the weights (1 - frac, frac) come from build-time tables
 * computed in float32 (nnopt.lowering.resize); the walk is internal/resize_bilinear.h.
 */
#include <stddef.h>

#include "nnrt/kernels/resize.h"

#include "../internal/resize_bilinear.h"

nnrt_status_t nnrt_resize_bilinear_f32(const nnrt_resize_bilinear_f32_params_t *params,
                                       const float *input, float *output)
{
    if (params == NULL || input == NULL || output == NULL || params->row_weights == NULL
        || params->col_weights == NULL
        || nnrt_resize_bilinear_check(&params->shape) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const nnrt_resize_bilinear_shape_t *s = &params->shape;
    const float *rw = params->row_weights;
    const float *cw = params->col_weights;
    float *out = output;
    float wy0 = 0.0f;
    float wy1 = 0.0f;
#define ROW(y)                                                                              \
    do {                                                                                    \
        wy0 = rw[2 * (y)];                                                                  \
        wy1 = rw[2 * (y) + 1];                                                              \
    } while (0)
    /* TFLM's operand order: ((p00 * wy0) * wx0 + (p10 * wy1) * wx0 + ...) + 0.0f */
#define BLEND(c) (p00[c] * wy0 * wx0 + p10[c] * wy1 * wx0 + p01[c] * wy0 * wx1 \
                  + p11[c] * wy1 * wx1 + 0.0f)
#define PIXEL(x, q00, q10, q01, q11, o, depth)                                              \
    do {                                                                                    \
        const float wx0 = cw[2 * (x)];                                                      \
        const float wx1 = cw[2 * (x) + 1];                                                  \
        const float *p00 = (q00);                                                           \
        const float *p10 = (q10);                                                           \
        const float *p01 = (q01);                                                           \
        const float *p11 = (q11);                                                           \
        float *op = (o);                                                                    \
        for (size_t c = 0; c < (depth); ++c) {                                              \
            *op++ = BLEND(c);                                                               \
        }                                                                                   \
    } while (0)
    NNRT_RESIZE_BILINEAR_DRIVE(float, s, input, out, ROW, PIXEL);
#undef PIXEL
#undef BLEND
#undef ROW
    return NNRT_OK;
}
