/*
 * int8 2-D max pooling, NHWC. Semantics of TFLM's reference MaxPool: the window is
 * clipped to the input, the largest value wins (starting from -128), then the
 * activation clamp. Channels are processed in blocks so that the input is read
 * sequentially and the kernel needs no scratch memory.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../cmsis/nnrt_cmsis.h"

#define BLOCK 64

nnrt_status_t nnrt_maxpool2d_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                                int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL
        || NNRT_POOL_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_maxpool_s8(params, input, output)) {
        return NNRT_OK;
    }
#endif
    const nnrt_pool_geom_t *g = &params->geom;
    const int32_t ch = g->channels;
    const int8_t act_min = (int8_t)params->act_min;
    const int8_t act_max = (int8_t)params->act_max;
    int8_t acc[BLOCK];

    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * g->input_h * g->input_w * ch;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy_start = y0 < 0 ? -y0 : 0;
            const int32_t fy_end = g->filter_h < g->input_h - y0 ? g->filter_h : g->input_h - y0;
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_start = x0 < 0 ? -x0 : 0;
                const int32_t fx_end =
                    g->filter_w < g->input_w - x0 ? g->filter_w : g->input_w - x0;
                for (int32_t c0 = 0; c0 < ch; c0 += BLOCK) {
                    const int32_t n = ch - c0 < BLOCK ? ch - c0 : BLOCK;
                    for (int32_t c = 0; c < n; ++c) {
                        acc[c] = INT8_MIN;
                    }
                    for (int32_t fy = fy_start; fy < fy_end; ++fy) {
                        for (int32_t fx = fx_start; fx < fx_end; ++fx) {
                            const int8_t *px =
                                in_b + ((size_t)(y0 + fy) * g->input_w + (size_t)(x0 + fx)) * ch
                                + c0;
                            for (int32_t c = 0; c < n; ++c) {
                                if (px[c] > acc[c]) {
                                    acc[c] = px[c];
                                }
                            }
                        }
                    }
                    for (int32_t c = 0; c < n; ++c) {
                        int8_t v = acc[c] < act_min ? act_min : acc[c];
                        output[c0 + c] = v > act_max ? act_max : v;
                    }
                }
                output += ch;
            }
        }
    }
    return NNRT_OK;
}
