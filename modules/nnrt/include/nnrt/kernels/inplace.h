/**
 * @file inplace.h
 * @brief Operators run in place: the output overwrites the input it consumes
 *        (TinyEngine's in-place depthwise convolution).
 *
 * An int8 depthwise convolution with depth multiplier 1 computes output channel c from
 * input channel c only. Done NNRT_DW_INPLACE_GROUP (G) channels at a time, the group's
 * output rows are computed into a ring of a few rows in scratch and stored over the
 * input buffer at `[p * C + c]` as soon as no row still to compute reads the input they
 * overlay (those bytes held input channel c of pixel p, or of an earlier pixel of an
 * earlier batch when the output is smaller; no other group reads channel c). The
 * `[1,H,W,C]` input buffer thus becomes the `[1,OH,OW,C]` output with a few rows of G
 * channels of extra memory (`rows * OW * min(C, G)` bytes) instead of a second tensor.
 * A group of 4 lets DSP cores use their SIMD multiply-accumulates (4 channels per input
 * word); one channel at a time would take scalar loops.
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

/** Channels computed per pass (the scratch holds this many output channels). */
#define NNRT_DW_INPLACE_GROUP 4

/**
 * Output rows of one group the scratch holds at once. Output row r (pixels
 * `[r*OW, (r+1)*OW)`) is stored over the buffer once no row still to compute reads the
 * input rows it overlays, i.e. before row r' when `((r+1)*OW - 1) / W` (the last input
 * row it overlays) `< r' * stride_h - pad_top` (the first input row r' reads): rows wait
 * in a ring of this many slots.
 */
static inline int32_t nnrt_depthwise_conv2d_inplace_s8_rows(const nnrt_conv_geom_t *g)
{
    int32_t ring = 1;
    int32_t done = 0;
    for (int32_t r = 0; r < g->output_h; ++r) {
        const int32_t first = r * g->stride_h - g->pad_top;
        while (done < r && ((done + 1) * g->output_w - 1) / g->input_w < first) {
            ++done;
        }
        ring = r - done + 1 > ring ? r - done + 1 : ring;
    }
    return ring;
}

/** Scratch bytes nnrt_depthwise_conv2d_inplace_s8() needs: the ring of output rows of
 *  min(C, group) channels. */
static inline size_t nnrt_depthwise_conv2d_inplace_s8_get_buffer_size(const nnrt_conv_geom_t *g)
{
    const size_t c = g->input_c < NNRT_DW_INPLACE_GROUP ? (size_t)g->input_c
                                                        : (size_t)NNRT_DW_INPLACE_GROUP;
    return (size_t)nnrt_depthwise_conv2d_inplace_s8_rows(g) * (size_t)g->output_w * c;
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
