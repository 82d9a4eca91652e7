/*
 * Internal to the nnrt kernels: the one ARG_MAX / ARG_MIN kernel (TFLM's reference
 * ArgMinMax with the micro kernel's GreaterFn / LessFn): along one axis of the input
 * viewed as [outer, axis_size, inner], the first index whose value no later one beats
 * with BEATS (`>` for ARG_MAX, `<` for ARG_MIN). int32 indices.
 */
#ifndef NNRT_KERNELS_INTERNAL_ARG_MIN_MAX_H_
#define NNRT_KERNELS_INTERNAL_ARG_MIN_MAX_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/reduce.h"

/** `nnrt_status_t NAME(const nnrt_arg_params_t *params, const T *input, int32_t *output)`:
 *  NNRT_ERR_ARG for a NULL pointer or NNRT_ARG_PARAMS_BAD(params). */
#define NNRT_ARG_MIN_MAX_KERNEL(NAME, T, BEATS)                                              \
    nnrt_status_t NAME(const nnrt_arg_params_t *params, const T *input, int32_t *output)     \
    {                                                                                        \
        if (params == NULL || input == NULL || output == NULL                                \
            || NNRT_ARG_PARAMS_BAD(params)) {                                                \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const int32_t n = params->axis_size;                                                 \
        const int32_t inner = params->inner;                                                 \
        for (int32_t o = 0; o < params->outer; ++o) {                                        \
            const T *base = input + (ptrdiff_t)o * n * inner;                                \
            for (int32_t i = 0; i < inner; ++i) {                                            \
                T best = base[i];                                                            \
                int32_t index = 0;                                                           \
                for (int32_t a = 1; a < n; ++a) {                                            \
                    const T v = base[(ptrdiff_t)a * inner + i];                              \
                    if (v BEATS best) {                                                      \
                        best = v;                                                            \
                        index = a;                                                           \
                    }                                                                        \
                }                                                                            \
                *output++ = index;                                                           \
            }                                                                                \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

#endif /* NNRT_KERNELS_INTERNAL_ARG_MIN_MAX_H_ */
