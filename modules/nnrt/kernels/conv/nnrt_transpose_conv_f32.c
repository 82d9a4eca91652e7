/*
 * float32 transposed convolution (conv.h), gathered per output value in the order
 * TFLM's reference scatter adds into it (input row, input column, input channel
 * ascending, from 0.0f), then the bias, then the clamp: the same float operations in
 * the same order, without initialising the whole output first. The loops are the
 * shared gather (internal/tconv_gather.h).
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/tconv.h"
#include "../internal/tconv_gather.h"

nnrt_status_t nnrt_transpose_conv_f32(const nnrt_transpose_conv_f32_params_t *params,
                                      const float *input, const float *filter,
                                      const float *bias, float *output)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL
        || !nnrt_tconv_geom_valid(&params->geom)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_transpose_conv_geom_t *g = &params->geom;
    const int32_t ic = g->input_c;
    const size_t w_stride = (size_t)g->filter_h * (size_t)g->filter_w * (size_t)ic;
    const float lo = params->act_min;
    const float hi = params->act_max;
    float *out = output;
#define TAP(xp, w_off)                                                                      \
    do {                                                                                    \
        const float *wp = w_c + (w_off);                                                    \
        for (int32_t d = 0; d < ic; ++d) {                                                  \
            acc += (xp)[d] * wp[d];                                                         \
        }                                                                                   \
    } while (0)
#define PIXEL(in_b, sp)                                                                     \
    for (int32_t c = 0; c < g->output_c; ++c, ++out) {                                      \
        const float *w_c = filter + (size_t)c * w_stride;                                   \
        float acc = 0.0f;                                                                   \
        NNRT_TCONV_TAPS(g, sp, in_b, TAP);                                                  \
        if (bias != NULL) {                                                                 \
            acc += bias[c];                                                                 \
        }                                                                                   \
        acc = acc < lo ? lo : acc;                                                          \
        *out = hi < acc ? hi : acc;                                                         \
    }
    NNRT_TCONV_PIXELS(float, g, input, PIXEL);
#undef PIXEL
#undef TAP
    return NNRT_OK;
}
