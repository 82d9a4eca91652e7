/*
 * int8 transposed convolution on the matrix core of the fast convolutions
 * (internal/gemm.h), bit-exact with nnrt_transpose_conv_s8() (conv.h).
 *
 * Output pixels split into stride_h x stride_w phases by (oy + pad_top) mod stride_h
 * and (ox + pad_left) mod stride_w: within a phase (ry, rx) every pixel reads the
 * same filter taps fy = ry + stride_h * my, fx = rx + stride_w * mx (my < MH, mx < MW),
 * from input pixel (qy - my, qx - mx), q = (o + pad) / stride. So a phase is a plain
 * convolution: its sub-filter [OC][MH][MW][IC] is copied once per call into the
 * scratch, and each pixel's column holds the input vectors of its taps (+ input
 * offset), zeros where a tap falls outside the input (TFLM's scatter adds nothing
 * there; a zero column value adds nothing either). Two pixels per matrix-core call.
 * Filters smaller than the stride leave phases without taps: those ops run
 * nnrt_transpose_conv_s8() (get_buffer_size() is 0 for them).
 */
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/conv.h"

#include "../internal/gemm.h"
#include "../internal/tconv.h"

#define ZEROS 64 /* input values that become column zeros, per put */

static size_t align4(size_t n)
{
    return (n + 3u) & ~(size_t)3u;
}

size_t nnrt_transpose_conv_gemm_s8_get_buffer_size(const nnrt_transpose_conv_s8_params_t *params)
{
    if (params == NULL || !nnrt_tconv_geom_valid(&params->geom)) {
        return 0;
    }
    const nnrt_transpose_conv_geom_t *g = &params->geom;
    if (g->filter_h < g->stride_h || g->filter_w < g->stride_w) {
        return 0;
    }
    const size_t k = (size_t)((g->filter_h + g->stride_h - 1) / g->stride_h)
                     * (size_t)((g->filter_w + g->stride_w - 1) / g->stride_w)
                     * (size_t)g->input_c;
    return align4((size_t)g->output_c * k) + NNRT_GEMM_COLS_BYTES(k);
}

typedef struct {
    const nnrt_transpose_conv_geom_t *g;
    int32_t mh;
    int32_t mw;
    int32_t k;
    int32_t off;
    const int8_t *zeros;
} phase_t;

/* Column p of the output pixel whose taps start at input pixel (qy, qx) of in_b. */
static void put_pixel(const phase_t *ph, void *cols, int32_t p, const int8_t *in_b, int32_t qy,
                      int32_t qx)
{
    const nnrt_transpose_conv_geom_t *g = ph->g;
    const int32_t ic = g->input_c;
    int32_t k0 = 0;
    for (int32_t my = 0; my < ph->mh; ++my) {
        const int32_t iy = qy - my;
        for (int32_t mx = 0; mx < ph->mw; ++mx, k0 += ic) {
            const int32_t ix = qx - mx;
            if (iy >= 0 && iy < g->input_h && ix >= 0 && ix < g->input_w) {
                nnrt_cols_put_s8(cols, ph->k, p, k0,
                                 in_b + ((size_t)iy * (size_t)g->input_w + (size_t)ix) * (size_t)ic,
                                 ic, ph->off);
            } else {
                for (int32_t d = 0; d < ic; d += ZEROS) {
                    nnrt_cols_put_s8(cols, ph->k, p, k0 + d, ph->zeros,
                                     ic - d < ZEROS ? ic - d : ZEROS, ph->off);
                }
            }
        }
    }
}

nnrt_status_t nnrt_transpose_conv_gemm_s8(const nnrt_transpose_conv_s8_params_t *params,
                                          const int8_t *input, const int8_t *filter,
                                          const int32_t *bias, int8_t *output, void *scratch)
{
    const size_t need = nnrt_transpose_conv_gemm_s8_get_buffer_size(params);
    if (need == 0) {
        return nnrt_transpose_conv_s8(params, input, filter, bias, output);
    }
    if (scratch == NULL || ((uintptr_t)scratch & 3u) != 0 || input == NULL || filter == NULL
        || output == NULL || params->multiplier == NULL || params->shift == NULL
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max || params->output_offset < INT8_MIN
        || params->output_offset > INT8_MAX || params->input_offset < -INT8_MAX
        || params->input_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const nnrt_transpose_conv_geom_t *g = &params->geom;
    const int32_t ic = g->input_c;
    const int32_t oc = g->output_c;
    const int32_t sh = g->stride_h;
    const int32_t sw = g->stride_w;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)ic;
    const size_t out_batch = (size_t)g->output_h * (size_t)g->output_w * (size_t)oc;
    const int32_t mh0 = (g->filter_h + sh - 1) / sh;
    const int32_t mw0 = (g->filter_w + sw - 1) / sw;
    int8_t *sub = (int8_t *)scratch;
    void *cols = (uint8_t *)scratch + align4((size_t)oc * (size_t)(mh0 * mw0 * ic));
    int8_t zeros[ZEROS];
    memset(zeros, (int)(int8_t)(-params->input_offset), sizeof(zeros));

    for (int32_t ry = 0; ry < sh; ++ry) {
        const int32_t oy0 = ((ry - g->pad_top % sh) + sh) % sh;
        for (int32_t rx = 0; rx < sw; ++rx) {
            const int32_t ox0 = ((rx - g->pad_left % sw) + sw) % sw;
            if (oy0 >= g->output_h || ox0 >= g->output_w) {
                continue;
            }
            phase_t ph = {g, (g->filter_h - ry + sh - 1) / sh, (g->filter_w - rx + sw - 1) / sw,
                          0, params->input_offset, zeros};
            ph.k = ph.mh * ph.mw * ic;
            /* the phase's sub-filter: [OC][MH][MW][IC] */
            for (int32_t c = 0; c < oc; ++c) {
                for (int32_t my = 0; my < ph.mh; ++my) {
                    for (int32_t mx = 0; mx < ph.mw; ++mx) {
                        const int32_t fy = ry + sh * my;
                        const int32_t fx = rx + sw * mx;
                        memcpy(sub + (size_t)c * (size_t)ph.k + (size_t)(my * ph.mw + mx) * (size_t)ic,
                               filter + (((size_t)c * (size_t)g->filter_h + (size_t)fy)
                                             * (size_t)g->filter_w + (size_t)fx) * (size_t)ic,
                               (size_t)ic);
                    }
                }
            }
            nnrt_gemm_s8_t gm = {ph.k, oc, sub, bias, params->multiplier, params->shift,
                                 params->per_channel, params->output_offset, params->act_min,
                                 params->act_max, 0};
            gm.stage = nnrt_gemm_s8_stage(&gm);
            int8_t *pending = NULL; /* pixel 0 of the next pair, its column put */
            const int8_t *pend_in = NULL;
            int32_t pend_qy = 0;
            int32_t pend_qx = 0;
            for (int32_t b = 0; b < g->batches; ++b) {
                const int8_t *in_b = input + (size_t)b * in_batch;
                for (int32_t oy = oy0; oy < g->output_h; oy += sh) {
                    const int32_t qy = (oy + g->pad_top) / sh;
                    int8_t *out_row = output + (size_t)b * out_batch
                                      + (size_t)oy * (size_t)g->output_w * (size_t)oc;
                    for (int32_t ox = ox0; ox < g->output_w; ox += sw) {
                        const int32_t qx = (ox + g->pad_left) / sw;
                        int8_t *out = out_row + (size_t)ox * (size_t)oc;
                        if (pending == NULL) {
                            put_pixel(&ph, cols, 0, in_b, qy, qx);
                            pending = out;
                            pend_in = in_b;
                            pend_qy = qy;
                            pend_qx = qx;
                        } else {
                            put_pixel(&ph, cols, 1, in_b, qy, qx);
                            nnrt_gemm_s8_2px(&gm, cols, pending, out);
                            pending = NULL;
                        }
                    }
                }
            }
            if (pending != NULL) { /* an odd pixel: pixel 1's column is a copy */
                put_pixel(&ph, cols, 1, pend_in, pend_qy, pend_qx);
                nnrt_gemm_s8_2px(&gm, cols, pending, NULL);
            }
        }
    }
    return NNRT_OK;
}
