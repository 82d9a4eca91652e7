/*
 * Internal to the nnrt kernels: one output pixel of an int8 convolution, any group
 * structure (internal/nnrt_conv_pixel_s8.c).
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_
#define NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_

#include <stdint.h>

#include "nnrt/kernels/conv.h"

/**
 * All OC outputs of conv output pixel (oy, ox) of one batch (in_b: its input):
 * requantised and clamped, then stored (keep_max == 0) or merged into out[] by maximum
 * (keep_max != 0, the fused pool).
 */
void nnrt_conv_pixel_s8(const nnrt_conv_s8_params_t *p, const int8_t *in_b,
                        const int8_t *filter, const int32_t *bias, int32_t oy, int32_t ox,
                        int8_t *out, int keep_max);

#endif /* NNRT_KERNELS_INTERNAL_CONV_PIXEL_H_ */
