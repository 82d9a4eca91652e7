/*
 * Internal to the nnrt kernels: the global average pool in row bands (pool.h,
 * nnrt_avgpool2d_rows_*): one output pixel whose window is the whole input, summed a
 * band of rows at a time into per-channel partial sums that the caller keeps between
 * bands. Per channel the taps are added in the window's [y][x] order, as the whole
 * pool (internal/pool_window.h) adds them, so the sums are the same.
 */
#ifndef NNRT_KERNELS_INTERNAL_POOL_ROWS_H_
#define NNRT_KERNELS_INTERNAL_POOL_ROWS_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/pool.h"

/** 1 unless one output pixel per batch whose unpadded window holds the whole input. */
#define NNRT_POOL_ROWS_BAD(g)                                                                  \
    ((g)->batches != 1 || (g)->output_h != 1 || (g)->output_w != 1 || (g)->pad_top != 0       \
     || (g)->pad_left != 0 || (g)->filter_h < (g)->input_h || (g)->filter_w < (g)->input_w)

/**
 * `nnrt_status_t NAME(const PT *params, const T *rows, int32_t row0, int32_t nrows,
 * ACC_T *acc, T *output)`; BAD(params): the pool's parameter predicate; STORE(dst,
 * acc, count) as in internal/pool_window.h (act_min, act_max in scope).
 */
#define NNRT_POOL_ROWS_KERNEL(NAME, PT, T, ACC_T, LIM_T, BAD, STORE)                           \
    nnrt_status_t NAME(const PT *params, const T *rows, int32_t row0, int32_t nrows,           \
                       ACC_T *acc, T *output)                                                  \
    {                                                                                          \
        if (params == NULL || rows == NULL || acc == NULL || output == NULL || BAD(params)    \
            || NNRT_POOL_ROWS_BAD(&params->geom) || row0 < 0 || nrows < 1                      \
            || row0 + nrows > params->geom.input_h) {                                          \
            return NNRT_ERR_ARG;                                                               \
        }                                                                                      \
        const nnrt_pool_geom_t *g = &params->geom;                                             \
        const int32_t ch = g->channels;                                                        \
        const LIM_T act_min = (LIM_T)params->act_min;                                          \
        const LIM_T act_max = (LIM_T)params->act_max;                                          \
        (void)act_min;                                                                         \
        (void)act_max;                                                                         \
        if (row0 == 0) {                                                                       \
            for (int32_t c = 0; c < ch; ++c) {                                                 \
                acc[c] = (ACC_T)0;                                                             \
            }                                                                                  \
        }                                                                                      \
        const size_t n = (size_t)nrows * (size_t)g->input_w;                                   \
        for (size_t px = 0; px < n; ++px) {                                                    \
            const T *in = rows + px * (size_t)ch;                                              \
            for (int32_t c = 0; c < ch; ++c) {                                                 \
                acc[c] += in[c];                                                               \
            }                                                                                  \
        }                                                                                      \
        if (row0 + nrows == g->input_h) {                                                      \
            const LIM_T count = (LIM_T)(g->input_h * g->input_w);                              \
            for (int32_t c = 0; c < ch; ++c) {                                                 \
                STORE(output[c], acc[c], count);                                               \
            }                                                                                  \
        }                                                                                      \
        return NNRT_OK;                                                                        \
    }

#endif /* NNRT_KERNELS_INTERNAL_POOL_ROWS_H_ */
