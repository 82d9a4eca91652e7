/*
 * Internal to the nnrt kernels: the one QUANTIZE float32 -> integer and the one
 * DEQUANTIZE integer -> float32 kernel (TFLM reference_ops::AffineQuantize /
 * Dequantize), instantiated per integer type.
 */
#ifndef NNRT_KERNELS_INTERNAL_AFFINE_H_
#define NNRT_KERNELS_INTERNAL_AFFINE_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/quantize.h"

/**
 * `nnrt_status_t NAME(const nnrt_affine_params_t *params, const float *input,
 * T *output, int32_t size)`: q = round(x / scale) + zero_point (half away from zero,
 * NaN -> zero_point) clamped to QMIN..QMAX. In place over the float32 input (output
 * element i lies below input element i + 1).
 */
#define NNRT_QUANTIZE_KERNEL(NAME, T, QMIN, QMAX)                                            \
    nnrt_status_t NAME(const nnrt_affine_params_t *params, const float *input, T *output,    \
                       int32_t size)                                                         \
    {                                                                                        \
        if (input == NULL || output == NULL || params == NULL || size < 0                    \
            || NNRT_QUANTIZE_PARAMS_BAD(params, QMIN, QMAX)) {                               \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const float scale = params->scale;                                                   \
        const float zp = (float)params->zero_point;                                          \
        for (int32_t i = 0; i < size; ++i) {                                                 \
            const float r = roundf(input[i] / scale); /* half away from zero, like TFLM */   \
            float q = r + zp; /* exact: |r| <= 2^24 here or clamped anyway */                \
            if (!(r == r)) {                                                                 \
                q = zp; /* NaN */                                                            \
            }                                                                                \
            output[i] = (T)(q > (float)(QMAX) ? (QMAX)                                       \
                                              : (q < (float)(QMIN) ? (QMIN) : (int32_t)q));  \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

/**
 * `nnrt_status_t NAME(const nnrt_affine_params_t *params, const T *input, float *output,
 * int32_t size)`: x = scale * (q - zero_point), zero_point in ZMIN..ZMAX. TFLM computes
 * (float)((double)scale * (q - zp)); the double product of a float and a small integer
 * is exact, so one float multiply rounds to the same value and needs no
 * double-precision FPU. Backward: float32 output in place over the narrower input.
 */
#define NNRT_DEQUANTIZE_KERNEL(NAME, T, ZMIN, ZMAX)                                          \
    nnrt_status_t NAME(const nnrt_affine_params_t *params, const T *input, float *output,    \
                       int32_t size)                                                         \
    {                                                                                        \
        if (input == NULL || output == NULL || params == NULL || size < 0                    \
            || NNRT_AFFINE_ZERO_POINT_BAD(params, ZMIN, ZMAX)) {                             \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const float scale = params->scale;                                                   \
        const int32_t zp = params->zero_point;                                               \
        for (int32_t i = size - 1; i >= 0; --i) {                                            \
            output[i] = scale * (float)((int32_t)input[i] - zp);                             \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

#endif /* NNRT_KERNELS_INTERNAL_AFFINE_H_ */
