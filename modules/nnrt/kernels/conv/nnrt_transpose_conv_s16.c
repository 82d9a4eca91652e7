/*
 * int16 x int8 transposed convolution (conv.h), TFLM's reference 16x8 TransposeConv
 * arithmetic gathered per output value: int64 sum of x * w (input zero point 0), plus
 * the int64 bias, then TFLM's 64-bit MultiplyByQuantizedMultiplier (the multiplier
 * rounded to 16 bits), clamped; no output offset (zero point 0). The loops are the
 * shared gather (internal/tconv_gather.h).
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/tconv.h"
#include "../internal/tconv_gather.h"

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
#define TAP(xp, w_off)                                                                      \
    do {                                                                                    \
        const int8_t *wp = w_c + (w_off);                                                   \
        int32_t dot = 0; /* |x * w| <= 2^22: ic < 512 stays in int32 */                    \
        for (int32_t d = 0; d < ic; ++d) {                                                  \
            dot += (int32_t)(xp)[d] * (int32_t)wp[d];                                       \
        }                                                                                   \
        acc += dot;                                                                         \
    } while (0)
#define PIXEL(in_b, sp)                                                                     \
    for (int32_t c = 0; c < g->output_c; ++c, ++out) {                                      \
        const int8_t *w_c = filter + (size_t)c * w_stride;                                  \
        int64_t acc = bias != NULL ? bias[c] : 0;                                           \
        NNRT_TCONV_TAPS(g, sp, in_b, TAP);                                                  \
        const int32_t j = p->per_channel ? c : 0;                                           \
        int32_t v = rq64(acc, p->multiplier[j], p->shift[j]);                               \
        v = v < p->act_min ? p->act_min : v;                                                \
        *out = (int16_t)(v > p->act_max ? p->act_max : v);                                  \
    }
    NNRT_TCONV_PIXELS(int16_t, g, input, PIXEL);
#undef PIXEL
#undef TAP
    return NNRT_OK;
}
