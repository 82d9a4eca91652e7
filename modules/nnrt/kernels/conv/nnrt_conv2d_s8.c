/*
 * int8 2-D convolution, NHWC input, OHWI filter, per-channel requantisation, with an
 * optional max pool folded into the output (see conv.h). Arithmetic of TFLM's
 * reference ConvPerChannel: taps outside the input are skipped, every tap adds
 * w * (x + input_offset) to an int32 accumulator.
 *
 * One group and no pool (the common case): per output pixel, three output channels
 * share each input word (internal/dot.h), a kernel row inside the input being one
 * contiguous run of input and filter bytes; no scratch. Otherwise the reference loops.
 * The variants of conv.h with scratch are faster; this entry serves callers without
 * scratch (and row-by-row callers) with the same results.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/conv_check.h"
#include "../internal/dot.h"
#include "../internal/requant.h"

/* First k >= 0 with origin + k * step >= 0 (origin may be negative). */
static int32_t first_inside(int32_t origin, int32_t step)
{
    return origin >= 0 ? 0 : (-origin + step - 1) / step;
}

/* One past the last k with origin + k * step < size, capped at taps. */
static int32_t end_inside(int32_t origin, int32_t step, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t n = (size - origin + step - 1) / step;
    return n < taps ? n : taps;
}

/*
 * All OC outputs of conv pixel (oy, ox) of one batch: requantised and clamped, then
 * stored (keep_max == 0) or merged into out[] by maximum (keep_max != 0).
 */
static void conv_pixel(const nnrt_conv_s8_params_t *p, const int8_t *in_b,
                       const int8_t *filter, const int32_t *bias, int32_t oy, int32_t ox,
                       int8_t *out, int keep_max)
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
    const int32_t in_off = p->input_offset;
    const int32_t out_off = p->output_offset;
    const int32_t act_min = p->act_min;
    const int32_t act_max = p->act_max;

    int32_t oc = 0;
    for (int32_t grp = 0; grp < groups; ++grp) {
        const int8_t *in_g = in_b + (size_t)grp * (size_t)fc;
        for (int32_t k = 0; k < per_group; ++k, ++oc) {
            const int8_t *w_oc = filter + (size_t)oc * filter_size;
            int32_t acc = 0;
            for (int32_t fy = fy_start; fy < fy_end; ++fy) {
                const int8_t *in_row = in_g + (size_t)(y0 + fy * g->dilation_h) * row_stride;
                const int8_t *w_row = w_oc + (size_t)fy * (size_t)g->filter_w * (size_t)fc;
                for (int32_t fx = fx_start; fx < fx_end; ++fx) {
                    const int8_t *xp =
                        in_row + (size_t)(x0 + fx * g->dilation_w) * (size_t)g->input_c;
                    const int8_t *wp = w_row + (size_t)fx * (size_t)fc;
                    for (int32_t ic = 0; ic < fc; ++ic) {
                        acc += (int32_t)wp[ic] * ((int32_t)xp[ic] + in_off);
                    }
                }
            }
            if (bias != NULL) {
                acc += bias[oc];
            }
            const int32_t qi = p->per_channel ? oc : 0;
            acc = nnrt_multiply_by_quantized_multiplier(acc, p->multiplier[qi], p->shift[qi]);
            acc = nnrt_clamp_i32(acc + out_off, act_min, act_max);
            if (!keep_max || acc > out[oc]) {
                out[oc] = (int8_t)acc;
            }
        }
    }
}

/* One group, no pool: see the file comment. */
static void conv_direct(const nnrt_conv_s8_params_t *p, const int8_t *input,
                        const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t c = (size_t)g->input_c;
    const int32_t k = g->filter_h * g->filter_w * g->input_c;
    const int32_t oc_n = g->output_c;
    const int32_t in_off = p->input_offset;
    const int32_t out_off = p->output_offset;
    const int32_t lo = p->act_min;
    const int32_t hi = p->act_max;
    const size_t row_stride = (size_t)g->input_w * c;
    const size_t in_batch = (size_t)g->input_h * row_stride;
    nnrt_rqf_t q[3];
    nnrt_rqf_init(&q[0], p->multiplier[0], p->shift[0], out_off);
    q[1] = q[0];
    q[2] = q[0];

    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_batch;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy_s = first_inside(y0, g->dilation_h);
            const int32_t fy_e = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
            for (int32_t ox = 0; ox < g->output_w; ++ox, output += oc_n) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_s = first_inside(x0, g->dilation_w);
                const int32_t fx_e = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
                /* a run of taps: all of a kernel row when dilation_w == 1, else one */
                const int32_t run = g->dilation_w == 1 ? fx_e - fx_s : 1;
                for (int32_t oc = 0; oc < oc_n; oc += 3) {
                    const int32_t rows = oc_n - oc < 3 ? oc_n - oc : 3;
                    int32_t acc[3] = {0, 0, 0};
                    for (int32_t r = 0; r < rows; ++r) {
                        acc[r] = bias != NULL ? bias[oc + r] : 0;
                    }
                    const int8_t *w_oc = filter + (size_t)oc * (size_t)k;
                    for (int32_t fy = fy_s; fy < fy_e && fx_s < fx_e; ++fy) {
                        const int8_t *in_row =
                            in_b + (size_t)(y0 + fy * g->dilation_h) * row_stride;
                        const int8_t *w_row = w_oc + (size_t)fy * (size_t)g->filter_w * c;
                        for (int32_t fx = fx_s; fx < fx_e; fx += run) {
                            const int8_t *xs = in_row + (size_t)(x0 + fx * g->dilation_w) * c;
                            const int8_t *ws = w_row + (size_t)fx * c;
                            const int32_t n = run * g->input_c;
                            if (rows == 3) {
                                nnrt_dot3_s8(xs, ws, k, n, in_off, acc);
                                continue;
                            }
                            for (int32_t r = 0; r < rows; ++r) {
                                acc[r] = nnrt_dot1_s8(xs, ws + (size_t)r * (size_t)k, n, in_off,
                                                      acc[r]);
                            }
                        }
                    }
                    for (int32_t r = 0; r < rows; ++r) {
                        if (p->per_channel) {
                            nnrt_rqf_init(&q[r], p->multiplier[oc + r], p->shift[oc + r],
                                          out_off);
                        }
                        output[oc + r] = nnrt_act8(nnrt_rqf(acc[r], &q[r], out_off), lo, hi);
                    }
                }
            }
        }
    }
}

nnrt_status_t nnrt_conv2d_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                             const int8_t *filter, const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const nnrt_conv_pool_t *pool = params->pool;
    if (pool == NULL && g->filter_c == g->input_c) {
        conv_direct(params, input, filter, bias, output);
        return NNRT_OK;
    }
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const int32_t oc_n = g->output_c;

    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_batch;
        if (pool == NULL) {
            for (int32_t oy = 0; oy < g->output_h; ++oy) {
                for (int32_t ox = 0; ox < g->output_w; ++ox) {
                    conv_pixel(params, in_b, filter, bias, oy, ox, output, 0);
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
                        conv_pixel(params, in_b, filter, bias, oy, ox, output, 1);
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
