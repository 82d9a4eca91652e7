/*
 * float32 2-D convolution, NHWC input, OHWI filter, with an optional max pool folded
 * into the output (see conv.h). Order of TFLM's reference Conv: taps outside the input
 * are skipped, the sum runs over [filter_y][filter_x][in_channel] from 0.0f, then the
 * bias is added and the result clamped (std::max then std::min, so NaN passes).
 */
#include <float.h>
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/fused_pool.h"
#include "../internal/window.h"

/*
 * All OC outputs of conv pixel (oy, ox) of one batch, bias added and clamped, then
 * stored (keep_max == 0) or merged into out[] by maximum (keep_max != 0).
 */
static void conv_pixel(const nnrt_conv_f32_params_t *p, const float *in_b,
                       const float *filter, const float *bias, int32_t oy, int32_t ox,
                       float *out, int keep_max)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    const int32_t fy_start = first_inside(y0, g->dilation_h);
    const int32_t fy_end = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
    const int32_t fx_start = first_inside(x0, g->dilation_w);
    const int32_t fx_end = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
    const int32_t fc = g->filter_c;
    const int32_t groups = g->input_c / fc;
    const int32_t per_group = g->output_c / groups;
    const size_t row_stride = (size_t)g->input_w * (size_t)g->input_c;
    const size_t filter_size = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)fc;
    const float act_min = p->act_min;
    const float act_max = p->act_max;

    int32_t oc = 0;
    for (int32_t grp = 0; grp < groups; ++grp) {
        const float *in_g = in_b + (size_t)grp * (size_t)fc;
        for (int32_t k = 0; k < per_group; ++k, ++oc) {
            const float *w_oc = filter + (size_t)oc * filter_size;
            float total = 0.0f;
            for (int32_t fy = fy_start; fy < fy_end; ++fy) {
                const float *in_row = in_g + (size_t)(y0 + fy * g->dilation_h) * row_stride;
                const float *w_row = w_oc + (size_t)fy * (size_t)g->filter_w * (size_t)fc;
                for (int32_t fx = fx_start; fx < fx_end; ++fx) {
                    const float *xp =
                        in_row + (size_t)(x0 + fx * g->dilation_w) * (size_t)g->input_c;
                    const float *wp = w_row + (size_t)fx * (size_t)fc;
                    for (int32_t ic = 0; ic < fc; ++ic) {
                        total += xp[ic] * wp[ic];
                    }
                }
            }
            float v = total + (bias != NULL ? bias[oc] : 0.0f);
            v = v < act_min ? act_min : v;
            v = act_max < v ? act_max : v;
            if (!keep_max || out[oc] < v) {
                out[oc] = v;
            }
        }
    }
}

#define NNRT_CONV_F32_PIXEL_(in_b, oy, ox, out, max)                                         \
    conv_pixel(params, in_b, filter, bias, oy, ox, out, max)
NNRT_CONV_F32_KERNEL(nnrt_conv2d_f32, 0)
