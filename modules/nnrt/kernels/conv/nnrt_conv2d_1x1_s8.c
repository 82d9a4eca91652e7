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
    const int dense = g->stride_h == 1 && g->stride_w == 1 && g->output_h == g->input_h
                      && g->output_w == g->input_w;
    /* Position of the next output pixel (batch, row, column) when strided. */
    int32_t b = 0;
    int32_t oy = 0;
    int32_t ox = 0;
    const int8_t *px[2];

    for (size_t q = 0; q < pixels; q += 2) {
        const int pair = q + 1 < pixels;
        for (int k = 0; k < 1 + pair; ++k) {
            if (dense) {
                px[k] = input + (q + (size_t)k) * (size_t)c;
                continue;
            }
            px[k] = input + ((((size_t)b * (size_t)g->input_h + (size_t)oy * (size_t)g->stride_h)
                              * (size_t)g->input_w + (size_t)ox * (size_t)g->stride_w)
                             * (size_t)c);
            if (++ox == g->output_w) {
                ox = 0;
                if (++oy == g->output_h) {
                    oy = 0;
                    ++b;
                }
            }
        }
        nnrt_cols_put_s8(scratch, c, 0, 0, px[0], c, in_off);
        nnrt_cols_put_s8(scratch, c, 1, 0, pair ? px[1] : px[0], c, in_off);
        nnrt_gemm_s8_2px(&mm, scratch, output + q * oc, pair ? output + (q + 1) * oc : NULL);
    }
    return NNRT_OK;
}
