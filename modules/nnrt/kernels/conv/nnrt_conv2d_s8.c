/*
 * int8 2-D convolution, NHWC input, OHWI filter, per-channel requantisation, with an
 * optional max pool folded into the output (see conv.h). Arithmetic of TFLM's
 * reference ConvPerChannel: taps outside the input are skipped, every tap adds
 * w * (x + input_offset) to an int32 accumulator.
 *
 * One group and no pool (the common case) runs nnrt_conv2d_opt_s8(); these reference
 * loops serve grouped convolutions and the fused pool.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/conv_check.h"
#include "../internal/conv_pixel.h"

nnrt_status_t nnrt_conv2d_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                             const int8_t *filter, const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const nnrt_conv_pool_t *pool = params->pool;
    if (pool == NULL && g->filter_c == g->input_c) {
        return nnrt_conv2d_opt_s8(params, input, filter, bias, output);
    }
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const int32_t oc_n = g->output_c;

    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_batch;
        if (pool == NULL) {
            for (int32_t oy = 0; oy < g->output_h; ++oy) {
                for (int32_t ox = 0; ox < g->output_w; ++ox) {
                    nnrt_conv_pixel_s8(params, in_b, filter, bias, oy, ox, output, 0);
                    output += oc_n;
                }
            }
            continue;
        }
        for (int32_t py = 0; py < pool->output_h; ++py) {
            const int32_t wy0 = py * pool->stride_h - pool->pad_top;
            const int32_t wy_start = wy0 < 0 ? 0 : wy0;
            const int32_t wy_end = wy0 + pool->filter_h < g->output_h
                                       ? wy0 + pool->filter_h : g->output_h;
            for (int32_t px = 0; px < pool->output_w; ++px) {
                const int32_t wx0 = px * pool->stride_w - pool->pad_left;
                const int32_t wx_start = wx0 < 0 ? 0 : wx0;
                const int32_t wx_end = wx0 + pool->filter_w < g->output_w
                                           ? wx0 + pool->filter_w : g->output_w;
                for (int32_t c = 0; c < oc_n; ++c) {
                    output[c] = INT8_MIN;
                }
                for (int32_t oy = wy_start; oy < wy_end; ++oy) {
                    for (int32_t ox = wx_start; ox < wx_end; ++ox) {
                        nnrt_conv_pixel_s8(params, in_b, filter, bias, oy, ox, output, 1);
                    }
                }
                for (int32_t c = 0; c < oc_n; ++c) {
                    output[c] = (int8_t)nnrt_clamp_i32(output[c], pool->act_min, pool->act_max);
                }
                output += oc_n;
            }
        }
    }
    return NNRT_OK;
}
