/*
 * int8 transposed convolution (conv.h): TFLM's reference TransposeConv arithmetic
 * computed by gathering (internal/tconv_gather.h), output channel group by group, so
 * that no int32 buffer of the whole output is needed: every input pixel that reaches
 * an output pixel adds a dot product over the input channels with
 * the filter tap (fy, fx) of each output channel: nnrt_dot3_s8() (three channels per
 * input word, SMLAD on DSP cores), nnrt_dot1_s8() for the channels left over.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"

#include "../internal/dot.h"
#include "../internal/requant.h"
#include "../internal/tconv.h"
#include "../internal/tconv_gather.h"

static int args_ok(const nnrt_transpose_conv_s8_params_t *p, const int8_t *input,
                   const int8_t *filter, const int8_t *output)
{
    return p != NULL && input != NULL && filter != NULL && output != NULL
           && p->multiplier != NULL && p->shift != NULL && nnrt_tconv_geom_valid(&p->geom)
           && p->act_min >= INT8_MIN && p->act_max <= INT8_MAX && p->act_min <= p->act_max
           && p->output_offset >= INT8_MIN && p->output_offset <= INT8_MAX
           && p->input_offset >= -INT8_MAX && p->input_offset <= INT8_MAX + 1;
}

/* Channels [c, c + n) (n = 1 or 3) of every output pixel. */
static void channels(const nnrt_transpose_conv_s8_params_t *p, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output, int32_t c,
                     int32_t n)
{
    const nnrt_transpose_conv_geom_t *g = &p->geom;
    const int32_t ic = g->input_c;
    const int32_t oc = g->output_c;
    const int32_t w_stride = g->filter_h * g->filter_w * ic; /* one output channel */
    const int8_t *w_c = filter + (size_t)c * (size_t)w_stride;
    nnrt_rqf_t q[3];
    int32_t b[3] = {0, 0, 0};
    for (int32_t k = 0; k < n; ++k) {
        const int32_t j = p->per_channel ? c + k : 0;
        nnrt_rqf_init(&q[k], p->multiplier[j], p->shift[j]);
        b[k] = bias != NULL ? bias[c + k] : 0;
    }
    int8_t *out = output + c;
#define TAP(xp, w_off)                                                                      \
    do {                                                                                    \
        if (n == 3) {                                                                       \
            nnrt_dot3_s8((xp), w_c + (w_off), w_stride, ic, p->input_offset, acc);          \
        } else {                                                                            \
            acc[0] = nnrt_dot1_s8((xp), w_c + (w_off), ic, p->input_offset, acc[0]);        \
        }                                                                                   \
    } while (0)
#define PIXEL(in_b, sp)                                                                     \
    do {                                                                                    \
        int32_t acc[3] = {b[0], b[1], b[2]};                                                \
        NNRT_TCONV_TAPS(g, sp, in_b, TAP);                                                  \
        for (int32_t k = 0; k < n; ++k) {                                                   \
            out[k] = nnrt_act8(nnrt_rqf(acc[k], &q[k], p->output_offset), p->act_min,       \
                               p->act_max);                                                 \
        }                                                                                   \
        out += oc;                                                                          \
    } while (0)
    NNRT_TCONV_PIXELS(int8_t, g, input, PIXEL);
#undef PIXEL
#undef TAP
}

nnrt_status_t nnrt_transpose_conv_s8(const nnrt_transpose_conv_s8_params_t *params,
                                     const int8_t *input, const int8_t *filter,
                                     const int32_t *bias, int8_t *output)
{
    if (!args_ok(params, input, filter, output)) {
        return NNRT_ERR_ARG;
    }
    const int32_t oc = params->geom.output_c;
    int32_t c = 0;
    for (; c + 3 <= oc; c += 3) {
        channels(params, input, filter, bias, output, c, 3);
    }
    for (; c < oc; ++c) {
        channels(params, input, filter, bias, output, c, 1);
    }
    return NNRT_OK;
}
