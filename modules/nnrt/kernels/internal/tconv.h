/*
 * Internal to the nnrt kernels: what the transposed convolutions share (conv.h): the
 * argument check and which input rows (or columns) reach one output row.
 */
#ifndef NNRT_KERNELS_INTERNAL_TCONV_H_
#define NNRT_KERNELS_INTERNAL_TCONV_H_

#include <stdint.h>

#include "nnrt/kernels/conv.h"

/** 1 when a transposed convolution geometry is valid (positive extents and strides,
 * non-negative padding), else 0. */
static inline int nnrt_tconv_geom_valid(const nnrt_transpose_conv_geom_t *g)
{
    return g->batches >= 1 && g->input_h >= 1 && g->input_w >= 1 && g->input_c >= 1
           && g->output_h >= 1 && g->output_w >= 1 && g->output_c >= 1
           && g->filter_h >= 1 && g->filter_w >= 1 && g->stride_h >= 1 && g->stride_w >= 1
           && g->pad_top >= 0 && g->pad_left >= 0;
}

/**
 * The input indices i in [*lo, *hi) whose filter tap k = t - i * stride lies in
 * [0, filter), t = output index + padding (>= 0): the inputs TFLM's scatter adds into
 * that output. Empty (*lo >= *hi) when none does.
 */
static inline void nnrt_tconv_span(int32_t t, int32_t stride, int32_t filter, int32_t size,
                                   int32_t *lo, int32_t *hi)
{
    const int32_t first = t >= filter ? (t - filter) / stride + 1 : 0;
    const int32_t last = t / stride; /* the largest i with i * stride <= t */
    *lo = first;
    *hi = last < size - 1 ? last + 1 : size;
}

#endif /* NNRT_KERNELS_INTERNAL_TCONV_H_ */
