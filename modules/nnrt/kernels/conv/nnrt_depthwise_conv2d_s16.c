/*
 * int16 x int8 depthwise convolution (16x8 quantisation), NHWC input, filter
 * [1,KH,KW,C*M], output channel ic * M + m (conv.h): per output value the 64-bit sum
 * of w * x over the taps inside the input, the int64 bias, TFLM's 64-bit requantisation
 * and the activation clamp.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/window.h"

nnrt_status_t nnrt_depthwise_conv2d_s16(const nnrt_conv_s16_params_t *params,
                                        const int16_t *input, const int8_t *filter,
                                        const int64_t *bias, int16_t *output)
{
    if (input == NULL || filter == NULL || output == NULL
        || nnrt_conv_s16_check(params, 1) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const int32_t mult = g->filter_c;
    const int32_t oc_n = g->output_c;
    const size_t in_row = (size_t)g->input_w * (size_t)g->input_c;
    const size_t w_row = (size_t)g->filter_w * (size_t)oc_n;
    int16_t *out = output;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int16_t *in_b = input + (size_t)b * (size_t)g->input_h * in_row;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy0 = first_inside(y0, g->dilation_h);
            const int32_t fy1 = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx0 = first_inside(x0, g->dilation_w);
                const int32_t fx1 = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
                for (int32_t oc = 0; oc < oc_n; ++oc, ++out) {
                    const int16_t *in_c = in_b + (size_t)(oc / mult);
                    int64_t acc = 0;
                    for (int32_t fy = fy0; fy < fy1; ++fy) {
                        const int16_t *ip = in_c + (size_t)(y0 + fy * g->dilation_h) * in_row;
                        const int8_t *wp = filter + (size_t)fy * w_row + (size_t)oc;
                        for (int32_t fx = fx0; fx < fx1; ++fx) {
                            acc += (int32_t)ip[(size_t)(x0 + fx * g->dilation_w)
                                               * (size_t)g->input_c]
                                   * (int32_t)wp[(size_t)fx * (size_t)oc_n];
                        }
                    }
                    if (bias != NULL) {
                        acc += bias[oc];
                    }
                    const int32_t j = params->per_channel ? oc : 0;
                    const int32_t v = nnrt_multiply_by_quantized_multiplier_s64(
                        acc, params->multiplier[j], params->shift[j]);
                    *out = (int16_t)nnrt_clamp_i32(v, params->act_min, params->act_max);
                }
            }
        }
    }
    return NNRT_OK;
}
