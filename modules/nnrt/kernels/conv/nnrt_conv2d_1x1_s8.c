/*
 * int8 1x1 convolution (pointwise), any stride: a matrix product of the input pixels
 * [N*OH*OW, C] and the filter [OC, C], two pixels at a time through the shared matrix
 * core (internal/gemm.h). Bit-exact with nnrt_conv2d_s8().
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/gemm.h"

size_t nnrt_conv2d_1x1_s8_get_buffer_size(const nnrt_conv_s8_params_t *params)
{
    return params == NULL ? 0 : NNRT_GEMM_COLS_BYTES(params->geom.input_c);
}

nnrt_status_t nnrt_conv2d_1x1_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output,
                                 void *scratch)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0) || scratch == NULL
        || ((uintptr_t)scratch & 3u) != 0) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    if (g->filter_h != 1 || g->filter_w != 1 || g->filter_c != g->input_c
        || g->pad_top != 0 || g->pad_left != 0 || params->pool != NULL
        || (int64_t)(g->output_h - 1) * g->stride_h >= g->input_h
        || (int64_t)(g->output_w - 1) * g->stride_w >= g->input_w) {
        return NNRT_ERR_ARG;
    }
    nnrt_gemm_s8_t mm = {
        g->input_c, g->output_c, filter, bias, params->multiplier, params->shift,
        params->per_channel, params->output_offset, params->act_min, params->act_max, 0,
    };
    mm.stage = nnrt_gemm_s8_stage(&mm);
    const int32_t c = g->input_c;
    const int32_t in_off = params->input_offset;
    const size_t oc = (size_t)g->output_c;
    const size_t pixels = (size_t)g->batches * (size_t)g->output_h * (size_t)g->output_w;
    const size_t x_step = (size_t)g->stride_w * (size_t)c;
    const size_t y_step = (size_t)g->stride_h * (size_t)g->input_w * (size_t)c;
    const size_t b_step = (size_t)g->input_h * (size_t)g->input_w * (size_t)c;
    /* The next output pixel's input: batch start, row start, pixel; its column. */
    const int8_t *in_b = input;
    const int8_t *in_row = input;
    const int8_t *px = input;
    int32_t oy = 0;
    int32_t ox = 0;

    for (size_t q = 0; q < pixels; ++q) {
        const int p = (int)(q & 1u);
        nnrt_cols_put_s8(scratch, c, p, 0, px, c, in_off);
        if (p == 1 || q + 1 == pixels) {
            if (p == 0) { /* an odd last pixel: pixel 1 repeats it */
                nnrt_cols_put_s8(scratch, c, 1, 0, px, c, in_off);
            }
            const size_t first = q - (size_t)p;
            nnrt_gemm_s8_2px(&mm, scratch, output + first * oc, p ? output + q * oc : NULL);
        }
        px += x_step;
        if (++ox == g->output_w) {
            ox = 0;
            in_row += y_step;
            if (++oy == g->output_h) {
                oy = 0;
                in_b += b_step;
                in_row = in_b;
            }
            px = in_row;
        }
    }
    return NNRT_OK;
}
