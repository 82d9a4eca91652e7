/**
 * @file tiling.h
 * @brief Helpers of row-by-row and patch-based execution: input windows and 2-D copies.
 *
 * nnopt runs some operators on sub-views of their tensors (`nnopt.codegen.views`): one
 * output row at a time, so that the output may overlap the input rows already consumed
 * (vMCU), or one spatial patch at a time for a whole stage of the network (MCUNetV2).
 * The kernels are the ordinary ones, called with the geometry of the sub-view; this
 * header holds the window arithmetic and the copies between a tile and a full tensor.
 */
#ifndef NNRT_KERNELS_TILING_H_
#define NNRT_KERNELS_TILING_H_

#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The input rows a band of output rows reads, and the padding above them. */
typedef struct {
    int32_t start;  /**< first input row read, >= 0 */
    int32_t rows;   /**< number of input rows read, >= 0 */
    int32_t pad;    /**< implicit padding rows above `start` for the band's first row */
} nnrt_window_t;

/**
 * Input rows read by output rows `[first, first + count)` of a window op with the given
 * stride, leading padding, effective kernel extent ((k - 1) * dilation + 1) and input
 * extent: `[max(0, first*stride - pad), min(size, (first+count-1)*stride - pad + kernel))`.
 * The same formula as `nnopt.passes.regions.Axis.span`.
 */
static inline nnrt_window_t nnrt_window_rows(int32_t first, int32_t count, int32_t stride,
                                             int32_t pad, int32_t kernel, int32_t size)
{
    const int32_t lo = first * stride - pad;
    const int32_t hi = (first + count - 1) * stride - pad + kernel;
    nnrt_window_t w;
    w.start = lo < 0 ? 0 : lo;
    w.rows = (hi > size ? size : hi) - w.start;
    if (w.rows < 0) {
        w.rows = 0;
    }
    w.pad = w.start - lo;
    return w;
}

/**
 * Copy `rows` rows of `row_bytes` bytes from `src` (rows `src_stride` bytes apart) to
 * `dst` (rows `dst_stride` bytes apart): a tile into its place in a full tensor, or a
 * window of a full tensor into a tile. The two must not overlap.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or negative sizes.
 */
nnrt_status_t nnrt_copy_2d_x8(const void *src, int32_t src_stride, void *dst,
                              int32_t dst_stride, int32_t rows, int32_t row_bytes);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_TILING_H_ */
