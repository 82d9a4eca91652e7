/*
 * float32 2-D convolution, NHWC input, OHWI filter, with an optional max pool folded
 * into the output (see conv.h). Order of TFLM's reference Conv: taps outside the input
 * are skipped, the sum runs over [filter_y][filter_x][in_channel] from 0.0f, then the
 * bias is added and the result clamped (std::max then std::min, so NaN passes).
 */
#include <float.h>
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/dot_f32.h"
#include "../internal/fused_pool.h"
#include "../internal/window.h"

/* The window of conv pixel (oy, ox): its origin and the filter taps inside the input. */
typedef struct {
    int32_t y0, x0, fy_start, fy_end, fx_start, fx_end;
} window_t;

/*
 * t[j] = the sum over the window of input x weight row w[j] (four output channels of
 * one group side by side: each input value read once), each in TFLM's order
 * [filter_y][filter_x][in_channel] from 0.0f: the four accumulators see the additions
 * of the one-channel loop. The taps run through nnrt_dot4_f32 (VLDM blocks on an FPU
 * core): a filter row's taps are one run in memory when its columns are adjacent
 * (dilation 1) and the group is the whole input (filter_c == input_c), else each
 * column's in_channel taps are one.
 */
static void conv_sum4(const nnrt_conv_geom_t *g, const window_t *win, const float *in_g,
                      const float *const w[4], float t[4], int32_t rows)
{
    const int32_t fc = g->filter_c;
    const size_t row_stride = (size_t)g->input_w * (size_t)g->input_c;
    const size_t w_row = (size_t)g->filter_w * (size_t)fc;
    const int32_t cols = win->fx_end - win->fx_start;
    const int32_t step = g->dilation_w == 1 && g->input_c == fc ? cols : 1; /* per run */
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int32_t fy = win->fy_start; fy < win->fy_end && cols > 0; ++fy) {
        const float *in_row = in_g + (size_t)(win->y0 + fy * g->dilation_h) * row_stride;
        for (int32_t fx = win->fx_start; fx < win->fx_end; fx += step) {
            const size_t at = (size_t)fy * w_row + (size_t)fx * (size_t)fc;
            const float *xr = in_row + (size_t)(win->x0 + fx * g->dilation_w) * (size_t)g->input_c;
#if !NNRT_VFP_DOT
            if (rows < 4) { /* no FPU: the used rows alone */
                for (int32_t j = 0; j < rows; ++j) {
                    nnrt_dot1_f32(xr, w[j] + at, step * fc, &acc[j]);
                }
                continue;
            }
#else
            (void)rows;
#endif
            const float *const wr[4] = {w[0] + at, w[1] + at, w[2] + at, w[3] + at};
            nnrt_dot4_f32(xr, wr, step * fc, acc, 0);
        }
    }
    t[0] = acc[0];
    t[1] = acc[1];
    t[2] = acc[2];
    t[3] = acc[3];
}

/*
 * All OC outputs of conv pixel (oy, ox) of one batch, bias added and clamped, then
 * stored (keep_max == 0) or merged into out[] by maximum (keep_max != 0). A group's
 * channels four at a time; a last block of fewer repeats its first row in the slots
 * past the group's end (computed on an FPU core, not stored; skipped without FPU).
 */
static void conv_pixel(const nnrt_conv_f32_params_t *p, const float *in_b,
                       const float *filter, const float *bias, int32_t oy, int32_t ox,
                       float *out, int keep_max)
{
    const nnrt_conv_geom_t *g = &p->geom;
    window_t win;
    win.y0 = oy * g->stride_h - g->pad_top;
    win.x0 = ox * g->stride_w - g->pad_left;
    win.fy_start = first_inside(win.y0, g->dilation_h);
    win.fy_end = end_inside(win.y0, g->dilation_h, g->input_h, g->filter_h);
    win.fx_start = first_inside(win.x0, g->dilation_w);
    win.fx_end = end_inside(win.x0, g->dilation_w, g->input_w, g->filter_w);
    const int32_t fc = g->filter_c;
    const int32_t groups = g->input_c / fc;
    const int32_t per_group = g->output_c / groups;
    const size_t filter_size = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)fc;
    const float act_min = p->act_min;
    const float act_max = p->act_max;

    for (int32_t grp = 0; grp < groups; ++grp) {
        const float *in_g = in_b + (size_t)grp * (size_t)fc;
        for (int32_t k = 0; k < per_group; k += 4) {
            const int32_t oc = grp * per_group + k;
            const int32_t n = per_group - k < 4 ? per_group - k : 4;
            const float *w[4];
            for (int32_t j = 0; j < 4; ++j) {
                w[j] = filter + (size_t)(oc + (j < n ? j : 0)) * filter_size;
            }
            float t[4];
            conv_sum4(g, &win, in_g, w, t, n);
            for (int32_t j = 0; j < n; ++j) {
                float v = t[j] + (bias != NULL ? bias[oc + j] : 0.0f);
                v = v < act_min ? act_min : v;
                v = act_max < v ? act_max : v;
                if (!keep_max || out[oc + j] < v) {
                    out[oc + j] = v;
                }
            }
        }
    }
}

#define NNRT_CONV_F32_PIXEL_(in_b, oy, ox, out, max)                                         \
    conv_pixel(params, in_b, filter, bias, oy, ox, out, max)
NNRT_CONV_F32_KERNEL(nnrt_conv2d_f32, 0)
