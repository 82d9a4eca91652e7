/*
 * Internal to the nnrt kernels: the one walk of the MEAN kernels (int8, float32) over
 * the geometry of nnrt_mean_geom_t (pool.h), TFLM's reference Mean / QuantizedMeanOrSum:
 * for each output element, in the row-major order of the kept dimensions, the sum of
 * the reduced elements in increasing input address order (ACC_T, from ZERO); each
 * kernel turns the sum into its output. The geometry check is the reductions' one
 * (nnrt_reduce_geom_valid(), internal/reduce.h).
 */
#ifndef NNRT_KERNELS_INTERNAL_MEAN_H_
#define NNRT_KERNELS_INTERNAL_MEAN_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/pool.h"
#include "reduce.h"

/** `static ACC_T NAME(const nnrt_mean_geom_t *g, const T *base)`: the sum of the
 *  reduced index space rooted at `base`, visited in row-major order. */
#define NNRT_MEAN_SUM_FN(NAME, T, ACC_T, ZERO)                                               \
    static ACC_T NAME(const nnrt_mean_geom_t *g, const T *base)                              \
    {                                                                                        \
        const int32_t last = g->reduce_rank - 1;                                             \
        const int32_t n = g->reduce_dims[last];                                              \
        const int32_t s = g->reduce_strides[last];                                           \
        int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};                                               \
        ACC_T sum = (ZERO);                                                                  \
        for (;;) {                                                                           \
            const T *p = base;                                                               \
            for (int32_t i = 0; i < n; ++i) {                                                \
                sum += p[(ptrdiff_t)i * s];                                                  \
            }                                                                                \
            int32_t d = last - 1;                                                            \
            for (; d >= 0; --d) {                                                            \
                base += g->reduce_strides[d];                                                \
                if (++idx[d] < g->reduce_dims[d]) {                                          \
                    break;                                                                   \
                }                                                                            \
                base -= (ptrdiff_t)g->reduce_strides[d] * g->reduce_dims[d];                 \
                idx[d] = 0;                                                                  \
            }                                                                                \
            if (d < 0) {                                                                     \
                return sum;                                                                  \
            }                                                                                \
        }                                                                                    \
    }

/** For each output element: STORE (a statement writing `*output++` from the element's
 *  reduced space rooted at `base`), then NNRT_OK after the last. */
#define NNRT_MEAN_WALK(T, g, input, output, STORE)                                           \
    do {                                                                                     \
        int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};                                               \
        const T *base = (input);                                                             \
        for (;;) {                                                                           \
            STORE;                                                                           \
            int32_t d = (g)->outer_rank - 1;                                                 \
            for (; d >= 0; --d) {                                                            \
                base += (g)->outer_strides[d];                                               \
                if (++idx[d] < (g)->outer_dims[d]) {                                         \
                    break;                                                                   \
                }                                                                            \
                base -= (ptrdiff_t)(g)->outer_strides[d] * (g)->outer_dims[d];               \
                idx[d] = 0;                                                                  \
            }                                                                                \
            if (d < 0) {                                                                     \
                return NNRT_OK;                                                              \
            }                                                                                \
        }                                                                                    \
    } while (0)

#endif /* NNRT_KERNELS_INTERNAL_MEAN_H_ */
