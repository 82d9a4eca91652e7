/*
 * float32 transposed convolution (conv.h), gathered per output value in the order
 * TFLM's reference scatter adds into it (input row, input column, input channel
 * ascending, from 0.0f), then the bias, then the clamp: the same float operations in
 * the same order, without initialising the whole output first.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/tconv.h"

nnrt_status_t nnrt_transpose_conv_f32(const nnrt_transpose_conv_f32_params_t *params,
                                      const float *input, const float *filter,
                                      const float *bias, float *output)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL
        || !nnrt_tconv_geom_valid(&params->geom)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_transpose_conv_geom_t *g = &params->geom;
    const int32_t ic = g->input_c;
    const size_t w_stride = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)ic;
    const float lo = params->act_min;
    const float hi = params->act_max;
    float *out = output;
    for (int32_t batch = 0; batch < g->batches; ++batch) {
        const float *in_b =
            input + (size_t)batch * (size_t)g->input_h * (size_t)g->input_w * (size_t)ic;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t ty = oy + g->pad_top;
            int32_t y_lo;
            int32_t y_hi;
            nnrt_tconv_span(ty, g->stride_h, g->filter_h, g->input_h, &y_lo, &y_hi);
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                const int32_t tx = ox + g->pad_left;
                int32_t x_lo;
                int32_t x_hi;
                nnrt_tconv_span(tx, g->stride_w, g->filter_w, g->input_w, &x_lo, &x_hi);
                for (int32_t c = 0; c < g->output_c; ++c, ++out) {
                    const float *w_c = filter + (size_t)c * w_stride;
                    float acc = 0.0f;
                    for (int32_t iy = y_lo; iy < y_hi; ++iy) {
                        const int32_t fy = ty - iy * g->stride_h;
                        for (int32_t ix = x_lo; ix < x_hi; ++ix) {
                            const int32_t fx = tx - ix * g->stride_w;
                            const float *xp =
                                in_b + ((size_t)iy * (size_t)g->input_w + (size_t)ix) * (size_t)ic;
                            const float *wp =
                                w_c + ((size_t)fy * (size_t)g->filter_w + (size_t)fx) * (size_t)ic;
                            for (int32_t d = 0; d < ic; ++d) {
                                acc += xp[d] * wp[d];
                            }
                        }
                    }
                    if (bias != NULL) {
                        acc += bias[c];
                    }
                    acc = acc < lo ? lo : acc;
                    *out = hi < acc ? hi : acc;
                }
            }
        }
    }
    return NNRT_OK;
}
