/*
 * Internal to the nnrt kernels: the one output walk of the bilinear resizes (int8 and
 * float32, resize.h), as a macro each kernel expands with its own blend (as
 * fused_pool.h does for the convolutions): no indirect call, the loop written out in
 * the kernel.
 *
 * The source rows / columns of every output row / column come from the build-time
 * tables of the shape (nnopt.lowering.resize); per output row the two source row
 * pointers and per output column the two pixel offsets are computed once, outside the
 * channel loop, and so is the kernel's own per-row / per-column weight work (ROW,
 * PIXEL below), so the innermost loop only blends.
 */
#ifndef NNRT_KERNELS_INTERNAL_RESIZE_BILINEAR_H_
#define NNRT_KERNELS_INTERNAL_RESIZE_BILINEAR_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/resize.h"

/**
 * Every output pixel of a bilinear resize, row-major over batch, row, column.
 *
 * @param T       element type of input and output
 * @param s       const nnrt_resize_bilinear_shape_t * (checked)
 * @param input   const T *
 * @param output  T *: advanced past the written output
 * @param ROW     ROW(y): statements once per output row y (its weights)
 * @param PIXEL   PIXEL(x, p00, p10, p01, p11, out, depth): the `depth` channels of
 *                output column x into out[0..depth) from the pixels (lower row, lower
 *                column), (upper row, lower column), (lower row, upper column),
 *                (upper row, upper column)
 */
#define NNRT_RESIZE_BILINEAR_DRIVE(T, s, input, output, ROW, PIXEL)                         \
    do {                                                                                    \
        const size_t depth_ = (size_t)(s)->channels;                                        \
        const size_t in_row_ = (size_t)(s)->input_w * depth_;                               \
        const size_t in_image_ = (size_t)(s)->input_h * in_row_;                            \
        for (int32_t b_ = 0; b_ < (s)->batches; ++b_) {                                     \
            const T *image_ = (input) + (size_t)b_ * in_image_;                             \
            for (int32_t y_ = 0; y_ < (s)->output_h; ++y_) {                                \
                const T *row0_ = image_ + (size_t)(s)->rows[2 * y_] * in_row_;              \
                const T *row1_ = image_ + (size_t)(s)->rows[2 * y_ + 1] * in_row_;          \
                ROW(y_);                                                                    \
                for (int32_t x_ = 0; x_ < (s)->output_w; ++x_, (output) += depth_) {        \
                    const size_t c0_ = (size_t)(s)->cols[2 * x_] * depth_;                  \
                    const size_t c1_ = (size_t)(s)->cols[2 * x_ + 1] * depth_;              \
                    PIXEL(x_, row0_ + c0_, row1_ + c0_, row0_ + c1_, row1_ + c1_, (output), \
                          depth_);                                                          \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    } while (0)

#endif /* NNRT_KERNELS_INTERNAL_RESIZE_BILINEAR_H_ */
