/*
 * Internal to the nnrt kernels: the fast int8 depthwise convolution behind
 * nnrt_depthwise_conv2d_s8() (no fused pool, at most NNRT_DW_MAX_TAPS filter taps).
 */
#ifndef NNRT_KERNELS_INTERNAL_DW_H_
#define NNRT_KERNELS_INTERNAL_DW_H_

#include <stdint.h>

#include "nnrt/kernels/conv.h"

/** Largest KH * KW the fast path takes (its per-channel weights live on the stack). */
#define NNRT_DW_MAX_TAPS 25

/** Fewest outputs per channel (output_h * output_w) for which nnrt_dw_plane_s8() takes
 *  a filter of at most NNRT_DW_MAX_TAPS taps: fewer do not repay a channel's set-up (a
 *  3x3 map of a 5x5 filter runs slower than on the fast path's groups). */
#define NNRT_DW_PLANE_MIN_OUTPUTS 16

/** Arguments already checked by the caller; params->pool must be NULL. */
void nnrt_dw_fast_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output);

/** Other filters than 3x3 (params->pool NULL, checked arguments): the plane path of
 *  internal/dw_plane.h in C when it takes the geometry and every channel, and a
 *  channel has NNRT_DW_PLANE_MIN_OUTPUTS outputs or the filter more than
 *  NNRT_DW_MAX_TAPS taps (DSP cores); returns 0 (nothing written) otherwise. The
 *  generic entry nnrt_depthwise_conv2d_s8() calls it, not the fast one, so that
 *  firmware with 3x3 depthwise ops only does not link it. */
int nnrt_dw_plane_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output);

#endif /* NNRT_KERNELS_INTERNAL_DW_H_ */
