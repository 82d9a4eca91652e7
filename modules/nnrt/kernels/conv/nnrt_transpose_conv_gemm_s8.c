/*
 * int8 transposed convolution on the matrix core of the fast convolutions
 * (internal/gemm.h), bit-exact with nnrt_transpose_conv_s8() (conv.h).
 *
 * Output pixels split into stride_h x stride_w phases by (oy + pad_top) mod stride_h
 * and (ox + pad_left) mod stride_w: within a phase (ry, rx) every pixel reads the
 * same filter taps fy = ry + stride_h * my, fx = rx + stride_w * mx (my < MH(ry),
 * mx < MW(rx)), from input pixel (qy - my, qx - mx), q = (o + pad) / stride: its
 * "anchor". So a phase is a plain convolution with the sub-filter [OC][MH][MW][IC],
 * which the lowering lays out once at build time (the phase-major filter, conv.h).
 *
 * Phases with the same tap counts (MH, MW) form a class (at most four: the counts
 * along an axis are ceil(K / s) or one less) and read the same input vectors for one
 * anchor. Class by class, the anchors run two at a time: their column is converted
 * once (+ input offset; zeros where a tap falls outside the input: TFLM's scatter adds
 * nothing there, a zero column value adds nothing either), then every phase of the
 * class multiplies it with its sub-filter (nnrt_gemm_s8_2px). A filter that is a
 * multiple of the stride (a U-Net's 2x2 / stride 2) is one class: one column per
 * anchor for all its phases. An anchor's pixel of a phase that falls outside the
 * output (the padding crops the border) is written into a sink in the scratch.
 */
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/conv.h"

#include "../internal/gemm.h"
#include "../internal/simd.h"
#include "../internal/tconv.h"

#define ZEROS 64 /* input values that become column zeros, per put */

static size_t align4(size_t n)
{
    return (n + 3u) & ~(size_t)3u;
}

/* Taps of phase r along an axis: the filter positions r, r + s, ... below k. */
static int32_t taps(int32_t k, int32_t s, int32_t r)
{
    return (k - r + s - 1) / s;
}

/* The first phase after r along an axis with fewer taps than r (or s). */
static int32_t class_end(int32_t k, int32_t s, int32_t r)
{
    const int32_t m = taps(k, s, r);
    int32_t e = r + 1;
    while (e < s && taps(k, s, e) == m) {
        ++e;
    }
    return e;
}

/* floor(a / s) for any a, s > 0. */
static int32_t floor_div(int32_t a, int32_t s)
{
    return a >= 0 ? a / s : -((-a + s - 1) / s);
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
    const size_t k = (size_t)taps(g->filter_h, g->stride_h, 0)
                     * (size_t)taps(g->filter_w, g->stride_w, 0) * (size_t)g->input_c;
    return NNRT_GEMM_COLS_BYTES(k) + align4((size_t)g->output_c);
}

/* One anchor: its batch's input and its position in the phase grid. */
typedef struct {
    const int8_t *in_b;
    int8_t *out_b;
    int32_t qy;
    int32_t qx;
} anchor_t;

/*
 * A class of phases with the same tap counts (mh, mw): phase rows [ry0, ry1) and columns
 * [rx0, rx1) (tap counts fall as r grows, so a class is a block of phases); rows_before
 * and cols_before count the filter rows / columns of the phases before it, so phase
 * (ry, rx)'s sub-filter starts at tap (rows_before + (ry - ry0) * mh) * KW
 * + mh * (cols_before + (rx - rx0) * mw) of the phase-major filter.
 */
typedef struct {
    int32_t ry0;
    int32_t ry1;
    int32_t rx0;
    int32_t rx1;
    int32_t mh;
    int32_t mw;
    int32_t rows_before;
    int32_t cols_before;
} phase_class_t;

typedef struct {
    const nnrt_transpose_conv_s8_params_t *p;
    const int8_t *filter; /* phase-major */
    void *cols;
    int8_t *sink;         /* output_c bytes: outputs that fall outside the output */
    const int8_t *zeros;
    nnrt_gemm_s8_t gm;    /* k and filter set per class and phase */
    phase_class_t c;
} tconv_t;

/* Column p of anchor a for the taps my < mh, mx < mw of the class. */
static void put_anchor(const tconv_t *t, int32_t p, const anchor_t *a)
{
    const nnrt_transpose_conv_geom_t *g = &t->p->geom;
    const int32_t ic = g->input_c;
    const int32_t k = t->gm.k;
    const int32_t off = t->p->input_offset;
    int32_t k0 = 0;
    for (int32_t my = 0; my < t->c.mh; ++my) {
        const int32_t iy = a->qy - my;
        for (int32_t mx = 0; mx < t->c.mw; ++mx, k0 += ic) {
            const int32_t ix = a->qx - mx;
            if (iy >= 0 && iy < g->input_h && ix >= 0 && ix < g->input_w) {
                nnrt_cols_put_s8(t->cols, k, p, k0,
                                 a->in_b + ((size_t)iy * (size_t)g->input_w + (size_t)ix)
                                               * (size_t)ic,
                                 ic, off);
            } else {
                for (int32_t d = 0; d < ic; d += ZEROS) {
                    nnrt_cols_put_s8(t->cols, k, p, k0 + d, t->zeros,
                                     ic - d < ZEROS ? ic - d : ZEROS, off);
                }
            }
        }
    }
}

/* Where anchor a's pixel of phase (ry, rx) goes, or NULL outside the output. */
static NNRT_ALWAYS_INLINE int8_t *pixel_of(const nnrt_transpose_conv_geom_t *g,
                                           const anchor_t *a, int32_t ry, int32_t rx)
{
    const int32_t oy = a->qy * g->stride_h + ry - g->pad_top;
    const int32_t ox = a->qx * g->stride_w + rx - g->pad_left;
    if (oy < 0 || oy >= g->output_h || ox < 0 || ox >= g->output_w) {
        return NULL;
    }
    return a->out_b + ((size_t)oy * (size_t)g->output_w + (size_t)ox) * (size_t)g->output_c;
}

/* Every phase of the class for anchors a0 and a1 (a1 NULL: a0 alone, its column
 * repeated): the columns once, then each phase whose pixels reach the output. */
static NNRT_ALWAYS_INLINE void run_pair(tconv_t *t, const anchor_t *a0,
                                         const anchor_t *a1)
{
    const nnrt_transpose_conv_geom_t *g = &t->p->geom;
    const phase_class_t *c = &t->c;
    const size_t per_tap = (size_t)g->output_c * (size_t)g->input_c;
    int put = 0;
    for (int32_t ry = c->ry0; ry < c->ry1; ++ry) {
        const size_t rows = (size_t)(c->rows_before + (ry - c->ry0) * c->mh);
        for (int32_t rx = c->rx0; rx < c->rx1; ++rx) {
            int8_t *o0 = pixel_of(g, a0, ry, rx);
            int8_t *o1 = a1 != NULL ? pixel_of(g, a1, ry, rx) : NULL;
            if (o0 == NULL && o1 == NULL) {
                continue;
            }
            if (!put) {
                put_anchor(t, 0, a0);
                put_anchor(t, 1, a1 != NULL ? a1 : a0);
                put = 1;
            }
            const size_t cols = (size_t)(c->cols_before + (rx - c->rx0) * c->mw);
            t->gm.filter = t->filter
                           + (rows * (size_t)g->filter_w + (size_t)c->mh * cols) * per_tap;
            nnrt_gemm_s8_2px(&t->gm, t->cols, o0 != NULL ? o0 : t->sink,
                             o1 != NULL ? o1 : t->sink);
        }
    }
}

/* The class's anchors (those with a pixel in the output), two at a time. */
static void run_class(tconv_t *t, const int8_t *input, int8_t *output)
{
    const nnrt_transpose_conv_geom_t *g = &t->p->geom;
    const phase_class_t *c = &t->c;
    /* o = q * s + r - pad in [0, O) for some r of the class */
    const int32_t qy0 = -floor_div(c->ry1 - 1 - g->pad_top, g->stride_h);
    const int32_t qy1 = floor_div(g->output_h - 1 + g->pad_top - c->ry0, g->stride_h);
    const int32_t qx0 = -floor_div(c->rx1 - 1 - g->pad_left, g->stride_w);
    const int32_t qx1 = floor_div(g->output_w - 1 + g->pad_left - c->rx0, g->stride_w);
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const size_t out_batch = (size_t)g->output_h * (size_t)g->output_w * (size_t)g->output_c;
    anchor_t pend = {NULL, NULL, 0, 0};
    int pending = 0;
    for (int32_t b = 0; b < g->batches; ++b) {
        for (int32_t qy = qy0; qy <= qy1; ++qy) {
            for (int32_t qx = qx0; qx <= qx1; ++qx) {
                const anchor_t a = {input + (size_t)b * in_batch, output + (size_t)b * out_batch,
                                    qy, qx};
                if (!pending) {
                    pend = a;
                    pending = 1;
                } else {
                    run_pair(t, &pend, &a);
                    pending = 0;
                }
            }
        }
    }
    if (pending) {
        run_pair(t, &pend, NULL);
    }
}

nnrt_status_t nnrt_transpose_conv_gemm_s8(const nnrt_transpose_conv_s8_params_t *params,
                                          const int8_t *input, const int8_t *filter,
                                          const int32_t *bias, int8_t *output, void *scratch)
{
    const size_t need = nnrt_transpose_conv_gemm_s8_get_buffer_size(params);
    if (need == 0 || scratch == NULL || ((uintptr_t)scratch & 3u) != 0 || input == NULL
        || filter == NULL || output == NULL || params->multiplier == NULL
        || params->shift == NULL || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max || params->output_offset < INT8_MIN
        || params->output_offset > INT8_MAX || params->input_offset < -INT8_MAX
        || params->input_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const nnrt_transpose_conv_geom_t *g = &params->geom;
    const int32_t sh = g->stride_h;
    const int32_t sw = g->stride_w;
    int8_t zeros[ZEROS];
    memset(zeros, (int)(int8_t)(-params->input_offset), sizeof(zeros));
    const size_t cols_bytes = need - align4((size_t)g->output_c);
    tconv_t t = {params, filter, scratch, (int8_t *)scratch + cols_bytes, zeros,
                 {0, g->output_c, filter, bias, params->multiplier, params->shift,
                  params->per_channel, params->output_offset, params->act_min,
                  params->act_max, 0, NULL NNRT_GEMM_BIAS_OFF(NULL)},
                 {0, 0, 0, 0, 0, 0, 0, 0}};
    t.gm.stage = nnrt_gemm_s8_stage(&t.gm);

    int32_t rows_before = 0;
    for (int32_t ry = 0; ry < sh;) {
        const int32_t mh = taps(g->filter_h, sh, ry);
        const int32_t ry1 = class_end(g->filter_h, sh, ry);
        int32_t cols_before = 0;
        for (int32_t rx = 0; rx < sw;) {
            const int32_t mw = taps(g->filter_w, sw, rx);
            const int32_t rx1 = class_end(g->filter_w, sw, rx);
            const phase_class_t c = {ry, ry1, rx, rx1, mh, mw, rows_before, cols_before};
            t.c = c;
            t.gm.k = mh * mw * g->input_c;
            run_class(&t, input, output);
            cols_before += (rx1 - rx) * mw;
            rx = rx1;
        }
        rows_before += (ry1 - ry) * mh;
        ry = ry1;
    }
    return NNRT_OK;
}
