/**
 * @file resize.h
 * @brief RESIZE_NEAREST_NEIGHBOR (a pure copy, any element type) and RESIZE_BILINEAR on
 *        [N, H, W, C] tensors.
 *
 * `nnopt.lowering.resize` evaluates TFLM's ComputeInterpolationValues(Integer) for
 * every output row and column at build time: the two source rows (columns) and their
 * interpolation weights come in tables, so the kernels only blend pixels. Semantics
 * follow TFLM's reference ResizeBilinear (float32) and ResizeBilinearInteger (int8,
 * weights in 1/1024 units, rounding half away from zero).
 */
#ifndef NNRT_KERNELS_RESIZE_H_
#define NNRT_KERNELS_RESIZE_H_

#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Shape and source tables of a bilinear resize.
 *
 * rows[2*y] and rows[2*y+1] are the lower and upper source rows of output row y
 * (0 <= lower <= upper < input_h); cols likewise for output columns.
 */
typedef struct {
    int32_t batches;   /**< >= 1 */
    int32_t input_h;   /**< >= 1 */
    int32_t input_w;   /**< >= 1 */
    int32_t output_h;  /**< >= 1 */
    int32_t output_w;  /**< >= 1 */
    int32_t channels;  /**< >= 1 */
    const int32_t *rows;  /**< [2 * output_h] */
    const int32_t *cols;  /**< [2 * output_w] */
} nnrt_resize_bilinear_shape_t;

/**
 * int8: the weight of the upper row of output row y is row_frac[y] / 1024 (that of the
 * lower row 1 - row_frac[y] / 1024; row_frac may be negative at the border with
 * half-pixel centers, as in TFLM); col_frac likewise. |frac| <= 1024, so the blend
 * of four int8 pixels (|sum| <= 128 * 3072^2) fits 32 bits.
 */
typedef struct {
    nnrt_resize_bilinear_shape_t shape;
    const int32_t *row_frac;  /**< [output_h] */
    const int32_t *col_frac;  /**< [output_w] */
} nnrt_resize_bilinear_s8_params_t;

/**
 * float32: row_weights[2*y] and row_weights[2*y+1] are TFLM's `1 - (input_y - y0)` and
 * `input_y - y0` of output row y, in float32; col_weights likewise.
 */
typedef struct {
    nnrt_resize_bilinear_shape_t shape;
    const float *row_weights;  /**< [2 * output_h] */
    const float *col_weights;  /**< [2 * output_w] */
} nnrt_resize_bilinear_f32_params_t;

/** int8 bilinear resize. Not in place. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_resize_bilinear_s8(const nnrt_resize_bilinear_s8_params_t *params,
                                      const int8_t *input, int8_t *output);

/** float32 bilinear resize. Not in place. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_resize_bilinear_f32(const nnrt_resize_bilinear_f32_params_t *params,
                                       const float *input, float *output);

/** Checks a shape descriptor and its tables; used by both kernels. */
nnrt_status_t nnrt_resize_bilinear_check(const nnrt_resize_bilinear_shape_t *shape);

/**
 * RESIZE_NEAREST_NEIGHBOR on [N, H, W, C] tensors of any element type: output pixel
 * (b, y, x) is input pixel (b, rows[y], cols[x]); `rows` (output_h entries) and `cols`
 * (output_w entries) come from TFLM's GetNearestNeighbor at build time, `pixel_bytes`
 * is C times the element size.
 */
typedef struct {
    int32_t batches;
    int32_t input_h;
    int32_t input_w;
    int32_t output_h;
    int32_t output_w;
    int32_t pixel_bytes;
    const int32_t *rows;
    const int32_t *cols;
} nnrt_resize_params_t;

nnrt_status_t nnrt_resize_nearest_x8(const nnrt_resize_params_t *params, const void *input,
                                     void *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_RESIZE_H_ */
