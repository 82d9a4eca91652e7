/**
 * @file inplace.h
 * @brief Operators run in place: the output overwrites the input it consumes
 *        (TinyEngine's in-place depthwise convolution).
 *
 * An int8 depthwise convolution with depth multiplier 1 computes output channel c from
 * input channel c only. Done one channel at a time, channel c of the output is first
 * computed into a scratch channel (`OH*OW` bytes), then stored over the input buffer at
 * `[p * C + c]`: those bytes held input channel c (pixel p, or an earlier pixel of an
 * earlier batch when the output is smaller), which no later channel reads. The
 * `[1,H,W,C]` input buffer thus becomes the `[1,OH,OW,C]` output with one channel of
 * extra memory instead of a second tensor.
 *
 * Arithmetic identical to nnrt_depthwise_conv2d_s8() (TFLM's reference
 * DepthwiseConvPerChannel): taps outside the input are skipped, `w * (x + input_offset)`
 * summed in int32, `+ bias`, requantised per channel, `+ output_offset`, clamped.
 */
#ifndef NNRT_KERNELS_INPLACE_H_
#define NNRT_KERNELS_INPLACE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/kernels/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scratch bytes nnrt_depthwise_conv2d_inplace_s8() needs: one output channel. */
static inline size_t nnrt_depthwise_conv2d_inplace_s8_get_buffer_size(const nnrt_conv_geom_t *g)
{
    return (size_t)g->output_h * (size_t)g->output_w;
}

/**
 * int8 depthwise convolution in place.
 *
 * @param params   as nnrt_depthwise_conv2d_s8(); depth multiplier (`geom.filter_c`) 1,
 *                 `pool` NULL, `output_h * output_w <= input_h * input_w`
 * @param buffer   `[N,H,W,C]` int8 input on entry, `[N,OH,OW,C]` output on return
 * @param filter   `[1,KH,KW,C]` int8
 * @param bias     `[C]` int32 or NULL
 * @param scratch  nnrt_depthwise_conv2d_inplace_s8_get_buffer_size() bytes, not
 *                 overlapping `buffer`
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_depthwise_conv2d_inplace_s8(const nnrt_conv_s8_params_t *params,
                                               int8_t *buffer, const int8_t *filter,
                                               const int32_t *bias, int8_t *scratch);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_INPLACE_H_ */
