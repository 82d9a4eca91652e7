/*
 * int8 convolution of any kernel size, stride, dilation and padding (one group): for
 * two output pixels at a time, their [KH, KW, C] input patches are gathered into the
 * int16 columns of the shared matrix core (internal/gemm.h), taps outside the input
 * as zeros, and multiplied with the [OC, KH*KW*C] filter. Bit-exact with
 * nnrt_conv2d_s8() (a padding tap adds w * 0, TFLM skips it: the same sum).
 *
 * A patch is first copied as int8 into a staging area after the columns (kernel rows
 * with memcpy, padding as the input zero point, which the offset turns into 0), then
 * converted in one aligned pass: word by word for any C (an RGB or mono first layer
 * included), at the cost of one copy of the patch.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/conv.h"

#include "../internal/conv_check.h"
#include "../internal/gemm.h"

size_t nnrt_conv2d_im2col_s8_get_buffer_size(const nnrt_conv_s8_params_t *params)
{
    if (params == NULL) {
        return 0;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const int64_t k = (int64_t)g->filter_h * g->filter_w * g->input_c;
    return NNRT_GEMM_COLS_BYTES(k) + (size_t)((k + 3) & ~3);
}

/* The int8 patch of output pixel (oy, ox) into stage[k], padding as -in_off. */
static void stage_patch(const nnrt_conv_geom_t *g, int32_t in_off, const int8_t *in_b,
                        int32_t oy, int32_t ox, int8_t *stage)
{
    const size_t c = (size_t)g->input_c;
    const size_t row = (size_t)g->filter_w * c;
    const int pad = -in_off; /* the input zero point: x + in_off == 0 */
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    for (int32_t fy = 0; fy < g->filter_h; ++fy, stage += row) {
        const int32_t y = y0 + fy * g->dilation_h;
        if (y < 0 || y >= g->input_h) {
            memset(stage, pad, row);
            continue;
        }
        const int8_t *in_row = in_b + (size_t)y * (size_t)g->input_w * c;
        if (g->dilation_w == 1 && x0 >= 0 && x0 + g->filter_w <= g->input_w) {
            memcpy(stage, in_row + (size_t)x0 * c, row);
            continue;
        }
        for (int32_t fx = 0; fx < g->filter_w; ++fx) {
            const int32_t x = x0 + fx * g->dilation_w;
            if (x < 0 || x >= g->input_w) {
                memset(stage + (size_t)fx * c, pad, c);
            } else {
                memcpy(stage + (size_t)fx * c, in_row + (size_t)x * c, c);
            }
        }
    }
}

nnrt_status_t nnrt_conv2d_im2col_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                    const int8_t *filter, const int32_t *bias, int8_t *output,
                                    void *scratch)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0) || scratch == NULL
        || ((uintptr_t)scratch & 3u) != 0) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    if (g->filter_c != g->input_c || params->pool != NULL) {
        return NNRT_ERR_ARG;
    }
    const int64_t k64 = (int64_t)g->filter_h * g->filter_w * g->input_c;
    if (k64 > INT32_MAX / 2) {
        return NNRT_ERR_ARG;
    }
    const int32_t k = (int32_t)k64;
    nnrt_gemm_s8_t mm = {
        k, g->output_c, filter, bias, params->multiplier, params->shift,
        params->per_channel, params->output_offset, params->act_min, params->act_max, 0,
    };
    mm.stage = nnrt_gemm_s8_stage(&mm);
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const size_t oc = (size_t)g->output_c;
    int8_t *stage = (int8_t *)scratch + NNRT_GEMM_COLS_BYTES(k);
    const size_t per_batch = (size_t)g->output_h * (size_t)g->output_w;
    const size_t pixels = (size_t)g->batches * per_batch;
    int32_t b = 0;
    int32_t oy = 0;
    int32_t ox = 0;

    for (size_t q = 0; q < pixels; q += 2) {
        const int pair = q + 1 < pixels;
        for (int p = 0; p < 2; ++p) {
            stage_patch(g, params->input_offset, input + (size_t)b * in_batch, oy, ox, stage);
            nnrt_cols_put_s8(scratch, k, p, 0, stage, k, params->input_offset);
            if (p == 0 && !pair) {
                continue; /* pixel 1 repeats pixel 0: its outputs are not stored */
            }
            if (++ox == g->output_w) {
                ox = 0;
                if (++oy == g->output_h) {
                    oy = 0;
                    ++b;
                }
            }
        }
        nnrt_gemm_s8_2px(&mm, scratch, output + q * oc, pair ? output + (q + 1) * oc : NULL);
    }
    return NNRT_OK;
}
