/*
 * Row-wise copy between a dense tile and a window of a full tensor (tiling.h).
 */
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/tiling.h"

nnrt_status_t nnrt_copy_2d_x8(const void *src, int32_t src_stride, void *dst,
                              int32_t dst_stride, int32_t rows, int32_t row_bytes)
{
    if (src == NULL || dst == NULL || rows < 0 || row_bytes < 0) {
        return NNRT_ERR_ARG;
    }
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    for (int32_t r = 0; r < rows; ++r) {
        memcpy(d + (ptrdiff_t)r * dst_stride, s + (ptrdiff_t)r * src_stride, (size_t)row_bytes);
    }
    return NNRT_OK;
}
