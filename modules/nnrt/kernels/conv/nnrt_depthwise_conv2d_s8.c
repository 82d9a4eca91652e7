/*
 * int8 depthwise 2-D convolution, NHWC input, [1,KH,KW,C*M] filter, per-channel
 * requantisation, with an optional max pool folded into the output (see conv.h).
 * Arithmetic of TFLM's reference DepthwiseConvPerChannel: taps outside the input are
 * skipped, every tap adds w * (x + input_offset) to an int32 accumulator. Without a
 * fused pool the plane path of internal/dw_plane.h for filters other than 3x3 (DSP
 * cores, nnrt_dw_plane_s8()), else for kernels up to NNRT_DW_MAX_TAPS taps the fast path
 * of internal/nnrt_dw_s8.c runs instead, with the same results; these loops serve the
 * fused pool and what is left (on cores without the plane path, the Cortex-M3, filters
 * over NNRT_DW_MAX_TAPS taps such as micro_speech's 10x8). With a depth multiplier of 4
 * or more they take four outputs of an input channel at a time, each input value loaded
 * and offset once for the four; a window wholly inside the input starts from
 * in_off * sum(w) instead (weight sums per call, up to DW_WSUM_MAX channels), and the
 * output stage takes the fast requantisation form (micro_speech on the M3: 3.96 M ->
 * 1.45 M instructions).
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/conv_check.h"
#include "../internal/dw.h"
#include "../internal/fused_pool.h"
#include "../internal/requant.h"
#include "../internal/window.h"
#include "../cmsis/nnrt_cmsis.h"

/* Output channels whose weight sums the generic loops keep on the stack (4 bytes each). */
#define DW_WSUM_MAX 64

/* Output channel oc of a pixel from its tap sum acc: bias, requantisation (the fast form
 * of internal/requant.h where the shift allows, else the reference), clamp, then
 * stored (keep_max == 0) or merged into out[] by maximum (keep_max != 0). */
static inline void dw_store(const nnrt_conv_s8_params_t *p, const int32_t *bias, int32_t oc,
                            int32_t acc, int8_t *out, int keep_max)
{
    if (bias != NULL) {
        acc += bias[oc];
    }
    const int32_t qi = p->per_channel ? oc : 0;
    const int32_t sh = p->shift[qi];
    acc = nnrt_rqf_fast_shift(sh)
              ? nnrt_rqf_fast(acc, p->multiplier[qi], (int32_t)1 << (-sh - 2), -sh - 1)
                    + p->output_offset
              : nnrt_rq_ref(acc, p->multiplier[qi], sh, p->output_offset);
    acc = nnrt_clamp_i32(acc, p->act_min, p->act_max);
    if (!keep_max || acc > out[oc]) {
        out[oc] = (int8_t)acc;
    }
}

/*
 * All C*M outputs of depthwise pixel (oy, ox) of one batch: requantised and clamped,
 * then stored (keep_max == 0) or merged into out[] by maximum (keep_max != 0).
 */
static void dw_pixel(const nnrt_conv_s8_params_t *p, const int8_t *in_b,
                     const int8_t *filter, const int32_t *bias, const uint32_t *wsum,
                     int32_t oy, int32_t ox, int8_t *out, int keep_max)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    const int32_t fy_start = first_inside(y0, g->dilation_h);
    const int32_t fy_end = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
    const int32_t fx_start = first_inside(x0, g->dilation_w);
    const int32_t fx_end = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
    const int32_t mult = g->filter_c;
    const size_t ch = (size_t)g->input_c;
    const size_t och = (size_t)g->output_c;
    const size_t row_stride = (size_t)g->input_w * ch;
    const int32_t in_off = p->input_offset;
    const size_t x_step = (size_t)g->dilation_w * ch;
    const size_t y_step = (size_t)g->dilation_h * row_stride;
    const int32_t nx = fx_end - fx_start;
    const int full = wsum != NULL && fy_start == 0 && fy_end == g->filter_h && fx_start == 0
                     && nx == g->filter_w;
    int32_t oc = 0;
    for (int32_t ic = 0; ic < g->input_c; ++ic) {
        int32_t m = 0;
        /* Four outputs of this input channel at a time: each input value loaded and
         * offset once for all four; per output the same taps in the same order. */
        for (; m + 4 <= mult; m += 4, oc += 4) {
            if (full) {
                /* The whole window inside: the input offset folded into the start
                 * value, in_off * sum(w) (exact: wrapping uint32, as the int32 sum of
                 * w * (x + in_off) wraps), so each tap is one load and four MLAs. */
                uint32_t u[4];
                for (int32_t j = 0; j < 4; ++j) {
                    u[j] = (uint32_t)in_off * wsum[oc + j];
                }
                const int8_t *xr = in_b + (size_t)y0 * row_stride
                                   + (size_t)x0 * ch + (size_t)ic;
                const int8_t *w = filter + (size_t)oc;
                for (int32_t fy = 0; fy < g->filter_h; ++fy, xr += y_step) {
                    const int8_t *x = xr;
                    const int8_t *const x_end = x + (size_t)nx * x_step;
                    for (; x != x_end; x += x_step, w += och) {
                        const uint32_t v = (uint32_t)(int32_t)*x;
                        u[0] += (uint32_t)(int32_t)w[0] * v;
                        u[1] += (uint32_t)(int32_t)w[1] * v;
                        u[2] += (uint32_t)(int32_t)w[2] * v;
                        u[3] += (uint32_t)(int32_t)w[3] * v;
                    }
                }
                for (int32_t j = 0; j < 4; ++j) {
                    dw_store(p, bias, oc + j, (int32_t)u[j], out, keep_max);
                }
                continue;
            }
            int32_t acc[4] = {0, 0, 0, 0};
            for (int32_t fy = fy_start; fy < fy_end && nx > 0; ++fy) {
                const int8_t *x = in_b + (size_t)(y0 + fy * g->dilation_h) * row_stride
                                  + (size_t)(x0 + fx_start * g->dilation_w) * ch + (size_t)ic;
                const int8_t *w = filter + ((size_t)fy * (size_t)g->filter_w
                                            + (size_t)fx_start) * och + (size_t)oc;
                const int8_t *const x_end = x + (size_t)nx * x_step;
                for (; x != x_end; x += x_step, w += och) {
                    const int32_t v = (int32_t)*x + in_off;
                    acc[0] += (int32_t)w[0] * v;
                    acc[1] += (int32_t)w[1] * v;
                    acc[2] += (int32_t)w[2] * v;
                    acc[3] += (int32_t)w[3] * v;
                }
            }
            for (int32_t j = 0; j < 4; ++j) {
                dw_store(p, bias, oc + j, acc[j], out, keep_max);
            }
        }
        for (; m < mult; ++m, ++oc) {
            int32_t acc = 0;
            for (int32_t fy = fy_start; fy < fy_end; ++fy) {
                const int8_t *in_row =
                    in_b + (size_t)(y0 + fy * g->dilation_h) * row_stride + (size_t)ic;
                const int8_t *w_row = filter + (size_t)fy * (size_t)g->filter_w * och + (size_t)oc;
                for (int32_t fx = fx_start; fx < fx_end; ++fx) {
                    const int32_t x = in_row[(size_t)(x0 + fx * g->dilation_w) * ch];
                    const int32_t w = w_row[(size_t)fx * och];
                    acc += w * (x + in_off);
                }
            }
            dw_store(p, bias, oc, acc, out, keep_max);
        }
    }
}

nnrt_status_t nnrt_depthwise_conv2d_s8(const nnrt_conv_s8_params_t *params,
                                       const int8_t *input, const int8_t *filter,
                                       const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 1)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_depthwise_conv_s8(params, input, filter, bias, output)) {
        return NNRT_OK;
    }
#endif
    const nnrt_conv_geom_t *g = &params->geom;
    const nnrt_conv_pool_t *pool = params->pool;
    if (pool == NULL && nnrt_dw_plane_s8(params, input, filter, bias, output)) {
        return NNRT_OK;
    }
    if (pool == NULL && (int64_t)g->filter_h * g->filter_w <= NNRT_DW_MAX_TAPS) {
        nnrt_dw_fast_s8(params, input, filter, bias, output);
        return NNRT_OK;
    }
    /* Per output channel the sum of its weights, for windows inside the input (depth
     * multiplier >= 4: the four-output loops; a stack array, so up to DW_WSUM_MAX
     * channels). */
    uint32_t wsum_buf[DW_WSUM_MAX];
    const uint32_t *wsum = NULL;
    if (g->filter_c >= 4 && g->output_c <= DW_WSUM_MAX) {
        const int32_t taps = g->filter_h * g->filter_w;
        for (int32_t oc = 0; oc < g->output_c; ++oc) {
            uint32_t sum = 0;
            for (int32_t t = 0; t < taps; ++t) {
                sum += (uint32_t)(int32_t)filter[(size_t)t * (size_t)g->output_c + (size_t)oc];
            }
            wsum_buf[oc] = sum;
        }
        wsum = wsum_buf;
    }
#define PIXEL(in_b, oy, ox, out, max)                                                         \
    dw_pixel(params, in_b, filter, bias, wsum, oy, ox, out, max)
#define CLAMP(out, c) out[c] = (int8_t)nnrt_clamp_i32(out[c], pool->act_min, pool->act_max)
    NNRT_CONV_POOL_DRIVE(int8_t, g, pool, input, output, INT8_MIN, PIXEL, CLAMP);
#undef PIXEL
#undef CLAMP
    return NNRT_OK;
}
