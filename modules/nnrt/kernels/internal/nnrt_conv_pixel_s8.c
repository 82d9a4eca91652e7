/*
 * All output channels of one conv output pixel, any group structure (TFLM's reference
 * ConvPerChannel per pixel: taps outside the input skipped), shared by the fused-pool
 * and grouped paths of nnrt_conv2d_s8() and the last pixels of nnrt_conv2d_opt_s8().
 * The sum over a kernel row runs through nnrt_dot1_s8() (a run of whole pixels when the
 * filter spans all channels and is undilated, else one tap's channels); requantisation
 * as everywhere (internal/requant.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "conv_pixel.h"
#include "dot.h"
#include "gemm.h"
#include "requant.h"
#include "window.h"

void nnrt_conv_pixel_s8(const nnrt_conv_s8_params_t *p, const int8_t *in_b,
                        const int8_t *filter, const int32_t *bias, const int32_t *rq,
                        int32_t oy, int32_t ox, int8_t *out, int keep_max)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    const int32_t fy_s = first_inside(y0, g->dilation_h);
    const int32_t fy_e = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
    const int32_t fx_s = first_inside(x0, g->dilation_w);
    const int32_t fx_e = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
    const int32_t fc = g->filter_c;
    const int32_t per_group = g->output_c / (g->input_c / fc);
    const size_t c = (size_t)g->input_c;
    const size_t row_stride = (size_t)g->input_w * c;
    const size_t filter_size = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)fc;
    /* taps per dot product: a whole kernel row of whole pixels, or one tap */
    const int32_t run = g->dilation_w == 1 && fc == g->input_c ? fx_e - fx_s : 1;
    const int32_t out_off = p->output_offset;
    nnrt_rqf_t q = {0, 0, 0, 0, 0};
    if (rq == NULL) {
        nnrt_rqf_init(&q, p->multiplier[0], p->shift[0]);
    }

    for (int32_t oc = 0; oc < g->output_c; ++oc) {
        const int8_t *in_g = in_b + (size_t)(oc / per_group * fc);
        const int8_t *w_oc = filter + (size_t)oc * filter_size;
        int32_t acc = rq != NULL ? nnrt_gemm_rq_bias(rq, oc) : bias != NULL ? bias[oc] : 0;
        for (int32_t fy = fy_s; fy < fy_e; ++fy) {
            const int8_t *in_row = in_g + (size_t)(y0 + fy * g->dilation_h) * row_stride;
            const int8_t *w_row = w_oc + (size_t)fy * (size_t)g->filter_w * (size_t)fc;
            for (int32_t fx = fx_s; fx < fx_e; fx += run) {
                acc = nnrt_dot1_s8(in_row + (size_t)(x0 + fx * g->dilation_w) * c,
                                   w_row + (size_t)fx * (size_t)fc, run * fc,
                                   p->input_offset, acc);
            }
        }
        int32_t r;
        if (rq != NULL) {
            r = nnrt_gemm_rq_out(acc, nnrt_gemm_rq_ch(rq, oc));
        } else {
            if (p->per_channel) {
                nnrt_rqf_init(&q, p->multiplier[oc], p->shift[oc]);
            }
            r = nnrt_rqf(acc, &q, out_off);
        }
        const int8_t v = nnrt_act8(r, p->act_min, p->act_max);
        if (!keep_max || v > out[oc]) {
            out[oc] = v;
        }
    }
}
