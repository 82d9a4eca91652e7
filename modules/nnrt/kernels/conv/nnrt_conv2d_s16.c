/*
 * int16 x int8 2-D convolution (16x8 quantisation), NHWC input, OHWI filter, grouped
 * when the filter depth divides the input depth (conv.h). Each output value sums
 * w * x over the filter taps inside the input (zero padding: the others are skipped, as
 * in TFLM's reference loops) in 64 bits, adds the int64 bias, then TFLM's 64-bit
 * requantisation and the activation clamp. The products of one tap are summed in 32
 * bits in runs of at most 511 (|w * x| <= 2^22), exactly.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/window.h"

/* sum_d w[d] * x[d] over n values, exact. */
static int64_t dot_s16x8(const int16_t *x, const int8_t *w, int32_t n)
{
    int64_t total = 0;
    while (n > 0) {
        const int32_t run = n < 511 ? n : 511;
        int32_t part = 0;
        for (int32_t d = 0; d < run; ++d) {
            part += (int32_t)x[d] * (int32_t)w[d];
        }
        total += part;
        x += run;
        w += run;
        n -= run;
    }
    return total;
}

nnrt_status_t nnrt_conv2d_s16(const nnrt_conv_s16_params_t *params, const int16_t *input,
                              const int8_t *filter, const int64_t *bias, int16_t *output)
{
    if (input == NULL || filter == NULL || output == NULL
        || nnrt_conv_s16_check(params, 0) != NNRT_OK) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const int32_t fc = g->filter_c;
    const int32_t per_group = g->output_c / (g->input_c / fc);
    const size_t in_row = (size_t)g->input_w * (size_t)g->input_c;
    const size_t filter_size = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)fc;
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
                for (int32_t oc = 0; oc < g->output_c; ++oc, ++out) {
                    const int16_t *in_g = in_b + (size_t)(oc / per_group) * (size_t)fc;
                    const int8_t *w_oc = filter + (size_t)oc * filter_size;
                    int64_t acc = 0;
                    for (int32_t fy = fy0; fy < fy1; ++fy) {
                        const int16_t *in_row_p =
                            in_g + (size_t)(y0 + fy * g->dilation_h) * in_row;
                        const int8_t *w_row = w_oc + (size_t)fy * (size_t)g->filter_w * (size_t)fc;
                        for (int32_t fx = fx0; fx < fx1; ++fx) {
                            acc += dot_s16x8(
                                in_row_p + (size_t)(x0 + fx * g->dilation_w) * (size_t)g->input_c,
                                w_row + (size_t)fx * (size_t)fc, fc);
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
