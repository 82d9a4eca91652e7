/*
 * CMSIS-NN glue for MAX_POOL_2D and AVERAGE_POOL_2D (see nnrt_cmsis.h); compiled to
 * nothing without NNRT_USE_CMSIS_NN.
 *
 * As TFLM's tensorflow/lite/micro/kernels/cmsis_nn/pooling.cc: leading padding, window
 * {w, h}, the fused activation range; windows are clipped to the input like the
 * reference kernels, and the average divides by the valid taps rounding half away from
 * zero. nnrt allows a pool in place (output == input, no padding); CMSIS-NN's loops
 * are not documented for it, so overlapping buffers stay on nnrt's path.
 */
#include "nnrt_cmsis.h"

#if NNRT_CMSIS_NN_ENABLED

#include <stddef.h>
#include <stdint.h>

#include "arm_nnfunctions.h"

typedef struct {
    cmsis_nn_pool_params pool;
    cmsis_nn_dims input;
    cmsis_nn_dims filter;
    cmsis_nn_dims output;
} pool_args_t;

/* 0 when CMSIS-NN must not run this pool: overlapping buffers or 16-bit extents. */
static int pool_args(const nnrt_pool_s8_params_t *p, const int8_t *input,
                     const int8_t *output, pool_args_t *a)
{
    const nnrt_pool_geom_t *g = &p->geom;
    const size_t in_bytes =
        (size_t)g->batches * (size_t)g->input_h * (size_t)g->input_w * (size_t)g->channels;
    const size_t out_bytes =
        (size_t)g->batches * (size_t)g->output_h * (size_t)g->output_w * (size_t)g->channels;
    const uintptr_t i0 = (uintptr_t)input;
    const uintptr_t o0 = (uintptr_t)output;
    if (i0 < o0 + out_bytes && o0 < i0 + in_bytes) {
        return 0;
    }
    const int32_t v[] = {g->input_h, g->input_w, g->channels, g->output_h, g->output_w,
                         g->filter_h, g->filter_w, g->stride_h, g->stride_w, g->pad_top,
                         g->pad_left};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        if (v[i] > NNRT_CMSIS_MAX_EXTENT) {
            return 0;
        }
    }
    a->pool = (cmsis_nn_pool_params){
        .stride = {.w = g->stride_w, .h = g->stride_h},
        .padding = {.w = g->pad_left, .h = g->pad_top},
        .activation = {.min = p->act_min, .max = p->act_max},
    };
    a->input = (cmsis_nn_dims){.n = g->batches, .h = g->input_h, .w = g->input_w,
                               .c = g->channels};
    a->filter = (cmsis_nn_dims){.n = 1, .h = g->filter_h, .w = g->filter_w, .c = 1};
    a->output = (cmsis_nn_dims){.n = g->batches, .h = g->output_h, .w = g->output_w,
                                .c = g->channels};
    return 1;
}

int nnrt_cmsis_maxpool_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                          int8_t *output)
{
    pool_args_t a;
    if (!pool_args(params, input, output, &a)) {
        return 0;
    }
    const cmsis_nn_context ctx = {.buf = NULL, .size = 0};
    return arm_max_pool_s8(&ctx, &a.pool, &a.input, input, &a.filter, &a.output, output)
           == ARM_CMSIS_NN_SUCCESS;
}

int nnrt_cmsis_avgpool_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                          int8_t *output)
{
    pool_args_t a;
    if (!pool_args(params, input, output, &a)) {
        return 0;
    }
    /* No nnrt pool kernel takes scratch; DSP cores want 4 bytes per channel. */
    int32_t buf[NNRT_CMSIS_AVGPOOL_STACK_BYTES / sizeof(int32_t)];
    const int32_t need = arm_avgpool_s8_get_buffer_size(a.output.w, a.input.c);
    if (need < 0 || (size_t)need > sizeof buf) {
        return 0;
    }
    const cmsis_nn_context ctx = {.buf = need > 0 ? buf : NULL, .size = need};
    return arm_avgpool_s8(&ctx, &a.pool, &a.input, input, &a.filter, &a.output, output)
           == ARM_CMSIS_NN_SUCCESS;
}

#else
typedef int nnrt_cmsis_pool_unused_t; /* ISO C: no empty translation unit */
#endif /* NNRT_CMSIS_NN_ENABLED */
