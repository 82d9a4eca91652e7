/*
 * Internal to the nnrt kernels: one output pixel of an int8 convolution, any group
 * structure (internal/nnrt_conv_pixel_s8.c).
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_
#define NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

/**
 * All OC outputs of conv output pixel (oy, ox) of one batch (in_b: its input):
 * requantised and clamped, then stored (keep_max == 0) or merged into out[] by maximum
 * (keep_max != 0, the fused pool). rq: NULL, or the channel records of a specialised
 * one-group op (internal/gemm.h), which then replace bias and p's multipliers and
 * shifts.
 */
void nnrt_conv_pixel_s8(const nnrt_conv_s8_params_t *p, const int8_t *in_b,
                        const int8_t *filter, const int32_t *bias, const int32_t *rq,
                        int32_t oy, int32_t ox, int8_t *out, int keep_max);

/**
 * Output pixels [done, all) of a convolution without pool, one at a time (the pixels
 * the scratch-free matrix core leaves: nnrt_conv2d_opt_s8() and its specialised
 * instances).
 */
static inline void nnrt_conv_pixels_from(const nnrt_conv_s8_params_t *params,
                                         const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, const int32_t *rq,
                                         int8_t *output, size_t done)
{
    const nnrt_conv_geom_t *g = &params->geom;
    const size_t per_batch = (size_t)g->output_h * (size_t)g->output_w;
    const size_t pixels = (size_t)g->batches * per_batch;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    for (size_t px = done; px < pixels; ++px) {
        nnrt_conv_pixel_s8(params, input + px / per_batch * in_batch, filter, bias, rq,
                           (int32_t)(px % per_batch / (size_t)g->output_w),
                           (int32_t)(px % (size_t)g->output_w),
                           output + px * (size_t)g->output_c, 0);
    }
}

#endif /* NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_ */
