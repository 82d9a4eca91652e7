/*
 * Internal to the nnrt kernels: the one gather loop of the transposed convolutions
 * (float32, int16 x int8, and int8 without scratch; conv.h), as macros each kernel
 * expands with its own accumulation (as fused_pool.h does for the convolutions): no
 * indirect call, the code of the loop written out in the kernel.
 *
 * For output pixel (oy, ox) the inputs that reach it are the rows iy with
 * fy = oy + pad_top - iy * stride_h in [0, KH) (nnrt_tconv_span(); the same for the
 * columns), visited in TFLM's scatter order (input row, then input column ascending),
 * which the float32 kernel needs for its rounding.
 */
#ifndef NNRT_KERNELS_INTERNAL_TCONV_GATHER_H_
#define NNRT_KERNELS_INTERNAL_TCONV_GATHER_H_

#include <stddef.h>
#include <stdint.h>

#include "tconv.h"

/** Which inputs reach one output pixel: rows [y_lo, y_hi), columns [x_lo, x_hi);
 * ty / tx: the output row / column plus the padding. */
typedef struct {
    int32_t ty;
    int32_t tx;
    int32_t y_lo;
    int32_t y_hi;
    int32_t x_lo;
    int32_t x_hi;
} nnrt_tconv_pixel_t;

/**
 * Every output pixel of a transposed convolution, row-major over batch, row, column.
 *
 * @param T      element type of the input
 * @param g      const nnrt_transpose_conv_geom_t *
 * @param input  const T *: batch 0 of the input
 * @param PIXEL  PIXEL(in_b, sp): statements computing the output pixel (all its
 *               channels) whose taps sp (const nnrt_tconv_pixel_t *) describes, from
 *               the batch's input in_b; the kernel advances its own output pointer
 */
#define NNRT_TCONV_PIXELS(T, g, input, PIXEL)                                               \
    do {                                                                                    \
        const size_t in_batch_ = (size_t)(g)->input_h * (size_t)(g)->input_w                \
                                 * (size_t)(g)->input_c;                                    \
        for (int32_t b_ = 0; b_ < (g)->batches; ++b_) {                                     \
            const T *in_b_ = (input) + (size_t)b_ * in_batch_;                              \
            nnrt_tconv_pixel_t sp_;                                                         \
            for (int32_t oy_ = 0; oy_ < (g)->output_h; ++oy_) {                             \
                sp_.ty = oy_ + (g)->pad_top;                                                \
                nnrt_tconv_span(sp_.ty, (g)->stride_h, (g)->filter_h, (g)->input_h,         \
                                &sp_.y_lo, &sp_.y_hi);                                      \
                for (int32_t ox_ = 0; ox_ < (g)->output_w; ++ox_) {                         \
                    sp_.tx = ox_ + (g)->pad_left;                                           \
                    nnrt_tconv_span(sp_.tx, (g)->stride_w, (g)->filter_w, (g)->input_w,     \
                                    &sp_.x_lo, &sp_.x_hi);                                  \
                    PIXEL(in_b_, (&sp_));                                                   \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    } while (0)

/**
 * The taps of one output pixel in TFLM's scatter order.
 *
 * @param g     const nnrt_transpose_conv_geom_t *
 * @param sp    const nnrt_tconv_pixel_t *: the pixel
 * @param in_b  const T *: the batch's input
 * @param TAP   TAP(xp, w_off): statements adding input pixel xp (its IC values) times
 *              the filter tap at offset w_off (= (fy * KW + fx) * IC) of each output
 *              channel's [KH, KW, IC] weights
 */
#define NNRT_TCONV_TAPS(g, sp, in_b, TAP)                                                   \
    do {                                                                                    \
        const size_t ic_ = (size_t)(g)->input_c;                                            \
        for (int32_t iy_ = (sp)->y_lo; iy_ < (sp)->y_hi; ++iy_) {                           \
            const int32_t fy_ = (sp)->ty - iy_ * (g)->stride_h;                             \
            for (int32_t ix_ = (sp)->x_lo; ix_ < (sp)->x_hi; ++ix_) {                       \
                const int32_t fx_ = (sp)->tx - ix_ * (g)->stride_w;                         \
                TAP((in_b) + ((size_t)iy_ * (size_t)(g)->input_w + (size_t)ix_) * ic_,      \
                    ((size_t)fy_ * (size_t)(g)->filter_w + (size_t)fx_) * ic_);             \
            }                                                                               \
        }                                                                                   \
    } while (0)

#endif /* NNRT_KERNELS_INTERNAL_TCONV_GATHER_H_ */
