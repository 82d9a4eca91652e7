/*
 * int8 depthwise convolution in place, one channel at a time through a scratch
 * channel (inplace.h). Arithmetic of TFLM's reference DepthwiseConvPerChannel.
 */
#include <stddef.h>

#include "nnrt/kernels/inplace.h"
#include "nnrt/kernels/quant.h"

/* First k >= 0 with origin + k * step >= 0 (origin may be negative). */
static int32_t first_tap(int32_t origin, int32_t step)
{
    return origin >= 0 ? 0 : (-origin + step - 1) / step;
}

/* One past the last k with origin + k * step < size, capped at taps. */
static int32_t end_tap(int32_t origin, int32_t step, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t n = (size - origin + step - 1) / step;
    return n < taps ? n : taps;
}

/* Output channel c of one batch into scratch[OH*OW]. */
static void channel(const nnrt_conv_s8_params_t *p, const int8_t *in_b, const int8_t *filter,
                    const int32_t *bias, int32_t c, int8_t *scratch)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t ch = (size_t)g->input_c;
    const int32_t qi = p->per_channel ? c : 0;
    const int32_t mult = p->multiplier[qi];
    const int32_t shift = p->shift[qi];
    const int32_t b = bias != NULL ? bias[c] : 0;
    for (int32_t oy = 0; oy < g->output_h; ++oy) {
        const int32_t y0 = oy * g->stride_h - g->pad_top;
        const int32_t fy0 = first_tap(y0, g->dilation_h);
        const int32_t fy1 = end_tap(y0, g->dilation_h, g->input_h, g->filter_h);
        for (int32_t ox = 0; ox < g->output_w; ++ox) {
            const int32_t x0 = ox * g->stride_w - g->pad_left;
            const int32_t fx0 = first_tap(x0, g->dilation_w);
            const int32_t fx1 = end_tap(x0, g->dilation_w, g->input_w, g->filter_w);
            int32_t acc = 0;
            for (int32_t fy = fy0; fy < fy1; ++fy) {
                const int32_t y = y0 + fy * g->dilation_h;
                const int8_t *row = in_b + (size_t)y * (size_t)g->input_w * ch + (size_t)c;
                const int8_t *w = filter + (size_t)fy * (size_t)g->filter_w * ch + (size_t)c;
                for (int32_t fx = fx0; fx < fx1; ++fx) {
                    const int32_t x = x0 + fx * g->dilation_w;
                    acc += (int32_t)w[(size_t)fx * ch] * ((int32_t)row[(size_t)x * ch]
                                                          + p->input_offset);
                }
            }
            acc += b;
            acc = nnrt_multiply_by_quantized_multiplier(acc, mult, shift);
            acc = nnrt_clamp_i32(acc + p->output_offset, p->act_min, p->act_max);
            scratch[(size_t)oy * (size_t)g->output_w + (size_t)ox] = (int8_t)acc;
        }
    }
}

nnrt_status_t nnrt_depthwise_conv2d_inplace_s8(const nnrt_conv_s8_params_t *params,
                                               int8_t *buffer, const int8_t *filter,
                                               const int32_t *bias, int8_t *scratch)
{
    if (params == NULL || buffer == NULL || filter == NULL || scratch == NULL
        || params->multiplier == NULL || params->shift == NULL || params->pool != NULL
        || !nnrt_conv_geom_valid(&params->geom, NULL, 1) || params->geom.filter_c != 1
        || (int64_t)params->geom.output_h * params->geom.output_w
               > (int64_t)params->geom.input_h * params->geom.input_w
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max || params->output_offset < INT8_MIN
        || params->output_offset > INT8_MAX || params->input_offset < -INT8_MAX
        || params->input_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const size_t ch = (size_t)g->input_c;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * ch;
    const size_t out_pixels = (size_t)g->output_h * (size_t)g->output_w;
    for (int32_t b = 0; b < g->batches; ++b) {
        int8_t *out_b = buffer + (size_t)b * out_pixels * ch;
        for (int32_t c = 0; c < g->input_c; ++c) {
            /* Batch b's input lies at or after its output: channel c of it is intact. */
            channel(params, buffer + (size_t)b * in_batch, filter, bias, c, scratch);
            for (size_t p = 0; p < out_pixels; ++p) {
                out_b[p * ch + (size_t)c] = scratch[p];
            }
        }
    }
    return NNRT_OK;
}
