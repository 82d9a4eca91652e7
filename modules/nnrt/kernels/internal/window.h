/*
 * Internal to the nnrt kernels: which taps of a window lie inside the input, along one
 * axis (TFLM's reference loops skip the others, i.e. zero padding). Shared by the
 * float32 and int8 conv/depthwise kernels and the per-pixel paths.
 */
#ifndef NNRT_KERNELS_INTERNAL_WINDOW_H_
#define NNRT_KERNELS_INTERNAL_WINDOW_H_

#include <stdint.h>

/* First k >= 0 with origin + k * step >= 0 (origin may be negative). */
static inline int32_t first_inside(int32_t origin, int32_t step)
{
    if (origin >= 0) {
        return 0;
    }
    return step == 1 ? -origin : (-origin + step - 1) / step;
}

/* One past the last k < taps with origin + k * step < size. */
static inline int32_t end_inside(int32_t origin, int32_t step, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t n = step == 1 ? size - origin : (size - origin + step - 1) / step;
    return n < taps ? n : taps;
}

#endif /* NNRT_KERNELS_INTERNAL_WINDOW_H_ */
