/*
 * int16 x int8 transposed convolution (conv.h), TFLM's reference 16x8 TransposeConv
 * arithmetic gathered per output value: int64 sum of x * w (input zero point 0), plus
 * the int64 bias, then TFLM's 64-bit MultiplyByQuantizedMultiplier (the multiplier
 * rounded to 16 bits), clamped; no output offset (zero point 0).
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/tconv.h"

/* TFLM's MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift). */
static int32_t rq64(int64_t x, int32_t multiplier, int32_t shift)
{
    const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    const int64_t round = (int64_t)1 << (total_shift - 1);
    return (int32_t)((x * (int64_t)reduced + round) >> total_shift);
}

nnrt_status_t nnrt_transpose_conv_s16(const nnrt_transpose_conv_s16_params_t *params,
                                      const int16_t *input, const int8_t *filter,
                                      const int64_t *bias, int16_t *output)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL
        || params->multiplier == NULL || params->shift == NULL
        || !nnrt_tconv_geom_valid(&params->geom) || params->act_min < INT16_MIN
        || params->act_max > INT16_MAX || params->act_min > params->act_max
        || params->geom.input_c > 511) {
        return NNRT_ERR_ARG;
    }
    const nnrt_transpose_conv_s16_params_t *p = params;
    const nnrt_transpose_conv_geom_t *g = &p->geom;
    const int32_t ic = g->input_c;
    const size_t w_stride = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)ic;
    for (int32_t c = 0; c < g->output_c; ++c) {
        const int32_t j = p->per_channel ? c : 0;
        if (p->shift[j] < -31 || p->shift[j] > 7 || p->multiplier[j] < 0) {
            return NNRT_ERR_ARG;
        }
    }
    int16_t *out = output;
    for (int32_t batch = 0; batch < g->batches; ++batch) {
        const int16_t *in_b =
            input + (size_t)batch * (size_t)g->input_h * (size_t)g->input_w * (size_t)ic;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t ty = oy + g->pad_top;
            int32_t y_lo;
            int32_t y_hi;
            nnrt_tconv_span(ty, g->stride_h, g->filter_h, g->input_h, &y_lo, &y_hi);
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                const int32_t tx = ox + g->pad_left;
                int32_t x_lo;
                int32_t x_hi;
                nnrt_tconv_span(tx, g->stride_w, g->filter_w, g->input_w, &x_lo, &x_hi);
                for (int32_t c = 0; c < g->output_c; ++c, ++out) {
                    const int8_t *w_c = filter + (size_t)c * w_stride;
                    int64_t acc = bias != NULL ? bias[c] : 0;
                    for (int32_t iy = y_lo; iy < y_hi; ++iy) {
                        const int32_t fy = ty - iy * g->stride_h;
                        for (int32_t ix = x_lo; ix < x_hi; ++ix) {
                            const int32_t fx = tx - ix * g->stride_w;
                            const int16_t *xp =
                                in_b + ((size_t)iy * (size_t)g->input_w + (size_t)ix) * (size_t)ic;
                            const int8_t *wp =
                                w_c + ((size_t)fy * (size_t)g->filter_w + (size_t)fx) * (size_t)ic;
                            int32_t dot = 0; /* |x * w| <= 2^22: ic < 512 stays in int32 */
                            for (int32_t d = 0; d < ic; ++d) {
                                dot += (int32_t)xp[d] * (int32_t)wp[d];
                            }
                            acc += dot;
                        }
                    }
                    const int32_t j = p->per_channel ? c : 0;
                    int32_t v = rq64(acc, p->multiplier[j], p->shift[j]);
                    v = v < p->act_min ? p->act_min : v;
                    *out = (int16_t)(v > p->act_max ? p->act_max : v);
                }
            }
        }
    }
    return NNRT_OK;
}
