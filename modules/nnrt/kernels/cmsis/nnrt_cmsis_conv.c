/*
 * CMSIS-NN glue for CONV_2D and DEPTHWISE_CONV_2D (see nnrt_cmsis.h); compiled to
 * nothing without NNRT_USE_CMSIS_NN.
 *
 * Parameter mapping, as TFLM's CMSIS-NN kernels do it (tflite-micro
 * tensorflow/lite/micro/kernels/cmsis_nn/conv.cc, depthwise_conv.cc): input_offset is
 * minus the input zero point and output_offset the output zero point (both exactly
 * nnrt's fields), padding is the leading padding (pad_left, pad_top), the activation
 * range is the fused one, and requantisation is per channel with TFLM's shift sign
 * (> 0: left), so nnrt's multiplier/shift arrays are passed as they are.
 */
#include "nnrt_cmsis.h"

#if NNRT_CMSIS_NN_ENABLED

#include <stdint.h>

#include "arm_nnfunctions.h"

/* 1 when every extent of the geometry fits CMSIS-NN's 16-bit locals. */
static int extents_fit(const nnrt_conv_geom_t *g)
{
    const int32_t v[] = {g->input_h, g->input_w, g->input_c, g->output_h, g->output_w,
                         g->output_c, g->filter_h, g->filter_w, g->stride_h, g->stride_w,
                         g->dilation_h, g->dilation_w, g->pad_top, g->pad_left};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        if (v[i] > NNRT_CMSIS_MAX_EXTENT) {
            return 0;
        }
    }
    return 1;
}

/* Dimensions and quantisation common to both wrappers. */
typedef struct {
    cmsis_nn_dims input;
    cmsis_nn_dims filter;
    cmsis_nn_dims bias;
    cmsis_nn_dims output;
    cmsis_nn_per_channel_quant_params quant;
} conv_dims_t;

static void fill_dims(const nnrt_conv_s8_params_t *p, int depthwise, conv_dims_t *d)
{
    const nnrt_conv_geom_t *g = &p->geom;
    d->input = (cmsis_nn_dims){.n = g->batches, .h = g->input_h, .w = g->input_w,
                               .c = g->input_c};
    if (depthwise) { /* [1, KH, KW, C*M] */
        d->filter = (cmsis_nn_dims){.n = 1, .h = g->filter_h, .w = g->filter_w,
                                    .c = g->output_c};
    } else { /* [OC, KH, KW, C] */
        d->filter = (cmsis_nn_dims){.n = g->output_c, .h = g->filter_h, .w = g->filter_w,
                                    .c = g->filter_c};
    }
    d->bias = (cmsis_nn_dims){.n = 1, .h = 1, .w = 1, .c = g->output_c};
    d->output = (cmsis_nn_dims){.n = g->batches, .h = g->output_h, .w = g->output_w,
                                .c = g->output_c};
    /* CMSIS-NN reads these arrays only; its struct has no const. */
    d->quant.multiplier = (int32_t *)(uintptr_t)p->multiplier;
    d->quant.shift = (int32_t *)(uintptr_t)p->shift;
}

/* Cases both wrappers decline: fused pool, per-tensor requantisation (CMSIS-NN takes
 * one multiplier per output channel), extents beyond 16 bits. */
static int common_ok(const nnrt_conv_s8_params_t *p)
{
    return p->pool == NULL && p->per_channel && extents_fit(&p->geom);
}

int nnrt_cmsis_conv_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                       const int8_t *filter, const int32_t *bias, int8_t *output,
                       void *scratch, size_t scratch_bytes)
{
    const nnrt_conv_geom_t *g = &params->geom;
    /* one group only: TFLM passes filter_dims.c = input_dims.c */
    if (!common_ok(params) || g->filter_c != g->input_c
        || ((uintptr_t)scratch & 3u) != 0) {
        return 0;
    }
    const cmsis_nn_conv_params cp = {
        .input_offset = params->input_offset,
        .output_offset = params->output_offset,
        .stride = {.w = g->stride_w, .h = g->stride_h},
        .padding = {.w = g->pad_left, .h = g->pad_top},
        .dilation = {.w = g->dilation_w, .h = g->dilation_h},
        .activation = {.min = params->act_min, .max = params->act_max},
    };
    conv_dims_t d;
    fill_dims(params, 0, &d);
    const int32_t need = arm_convolve_wrapper_s8_get_buffer_size(&cp, &d.input, &d.filter,
                                                                 &d.output);
    if (need < 0 || (size_t)need > scratch_bytes || (need > 0 && scratch == NULL)) {
        return 0; /* the guard: never more memory than the caller guaranteed */
    }
    const cmsis_nn_context ctx = {.buf = need > 0 ? scratch : NULL, .size = need};
    return arm_convolve_wrapper_s8(&ctx, &cp, &d.quant, &d.input, input, &d.filter, filter,
                                   &d.bias, bias, &d.output, output)
           == ARM_CMSIS_NN_SUCCESS;
}

int nnrt_cmsis_depthwise_conv_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &params->geom;
    /* arm_depthwise_conv_wrapper_s8() documents batch 1 */
    if (!common_ok(params) || g->batches != 1) {
        return 0;
    }
    const cmsis_nn_dw_conv_params dp = {
        .input_offset = params->input_offset,
        .output_offset = params->output_offset,
        .ch_mult = g->filter_c,
        .stride = {.w = g->stride_w, .h = g->stride_h},
        .padding = {.w = g->pad_left, .h = g->pad_top},
        .dilation = {.w = g->dilation_w, .h = g->dilation_h},
        .activation = {.min = params->act_min, .max = params->act_max},
    };
    conv_dims_t d;
    fill_dims(params, 1, &d);
    /* No nnrt depthwise kernel takes scratch: only the paths that need no buffer
     * (3x3 with padding <= 1, the generic loops; on DSP cores the other depth-multiplier-1
     * shapes want one, and nnrt's own fast path runs them). */
    if (arm_depthwise_conv_wrapper_s8_get_buffer_size(&dp, &d.input, &d.filter, &d.output)
        != 0) {
        return 0;
    }
    const cmsis_nn_context ctx = {.buf = NULL, .size = 0};
    return arm_depthwise_conv_wrapper_s8(&ctx, &dp, &d.quant, &d.input, input, &d.filter,
                                         filter, &d.bias, bias, &d.output, output)
           == ARM_CMSIS_NN_SUCCESS;
}

#else
typedef int nnrt_cmsis_conv_unused_t; /* ISO C: no empty translation unit */
#endif /* NNRT_CMSIS_NN_ENABLED */
