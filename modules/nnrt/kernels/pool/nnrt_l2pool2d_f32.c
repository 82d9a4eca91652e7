/*
 * float32 2-D L2 pooling (L2_POOL_2D), NHWC. Semantics of TFLM's reference L2Pool: sum
 * the squares of the clipped window in [y][x] order starting from 0.0f, divide by the
 * number of valid taps (as float), take sqrtf (correctly rounded, as std::sqrt), then
 * min(max(x, act_min), act_max).
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/pool.h"

#define BLOCK 32

nnrt_status_t nnrt_l2pool2d_f32(const nnrt_pool_f32_params_t *params, const float *input,
                                float *output)
{
    if (params == NULL || input == NULL || output == NULL
        || !nnrt_pool_geom_valid(&params->geom)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_pool_geom_t *g = &params->geom;
    const int32_t ch = g->channels;
    const float act_min = params->act_min;
    const float act_max = params->act_max;
    float acc[BLOCK];

    for (int32_t b = 0; b < g->batches; ++b) {
        const float *in_b = input + (size_t)b * g->input_h * g->input_w * ch;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int32_t fy_start = y0 < 0 ? -y0 : 0;
            const int32_t fy_end = g->filter_h < g->input_h - y0 ? g->filter_h : g->input_h - y0;
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                const int32_t fx_start = x0 < 0 ? -x0 : 0;
                const int32_t fx_end =
                    g->filter_w < g->input_w - x0 ? g->filter_w : g->input_w - x0;
                const float count = (float)((fy_end - fy_start) * (fx_end - fx_start));
                for (int32_t c0 = 0; c0 < ch; c0 += BLOCK) {
                    const int32_t n = ch - c0 < BLOCK ? ch - c0 : BLOCK;
                    for (int32_t c = 0; c < n; ++c) {
                        acc[c] = 0.0f;
                    }
                    for (int32_t fy = fy_start; fy < fy_end; ++fy) {
                        for (int32_t fx = fx_start; fx < fx_end; ++fx) {
                            const float *px =
                                in_b + ((size_t)(y0 + fy) * g->input_w + (size_t)(x0 + fx)) * ch
                                + c0;
                            for (int32_t c = 0; c < n; ++c) {
                                acc[c] += px[c] * px[c];
                            }
                        }
                    }
                    for (int32_t c = 0; c < n; ++c) {
                        const float l2 = sqrtf(acc[c] / count);
                        const float v = l2 < act_min ? act_min : l2;
                        output[c0 + c] = act_max < v ? act_max : v;
                    }
                }
                output += ch;
            }
        }
    }
    return NNRT_OK;
}
