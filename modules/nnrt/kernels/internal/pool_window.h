/*
 * Internal to the nnrt kernels: the one window driver of the 2-D pools (MAX_POOL_2D,
 * AVERAGE_POOL_2D, L2_POOL_2D; int8 and float32), NHWC, TFLM's reference loops: for
 * each output pixel the window clipped to the input is walked in [y][x] order, BLOCK
 * channels at a time, each accumulator from INIT, ACCUM(acc, x) folding in each tap;
 * STORE(dst, acc, count) then writes the output element (count: the valid taps).
 * Channels in blocks: the input is read sequentially and no scratch memory is needed.
 */
#ifndef NNRT_KERNELS_INTERNAL_POOL_WINDOW_H_
#define NNRT_KERNELS_INTERNAL_POOL_WINDOW_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/pool.h"

/**
 * `nnrt_status_t NAME(const PT *params, const T *input, T *output)`: NNRT_ERR_ARG for a
 * NULL pointer or BAD(params) (the predicate of the pool's exported check), then
 * HOOK(params, input, output) (a faster library path that may return NNRT_OK, or
 * nothing), then the walk. `act_min`, `act_max` and the tap count `count` (LIM_T) are
 * in scope for STORE.
 */
#define NNRT_POOL_KERNEL(NAME, PT, T, ACC_T, LIM_T, BLOCK, BAD, HOOK, INIT, ACCUM, STORE)     \
    nnrt_status_t NAME(const PT *params, const T *input, T *output)                            \
    {                                                                                          \
        if (params == NULL || input == NULL || output == NULL || BAD(params)) {                \
            return NNRT_ERR_ARG;                                                               \
        }                                                                                      \
        HOOK(params, input, output)                                                            \
        const nnrt_pool_geom_t *g = &params->geom;                                             \
        const int32_t ch = g->channels;                                                        \
        const LIM_T act_min = (LIM_T)params->act_min;                                          \
        const LIM_T act_max = (LIM_T)params->act_max;                                          \
        ACC_T acc[BLOCK];                                                                      \
        for (int32_t b = 0; b < g->batches; ++b) {                                             \
            const T *in_b = input + (size_t)b * g->input_h * g->input_w * ch;                  \
            for (int32_t oy = 0; oy < g->output_h; ++oy) {                                     \
                const int32_t y0 = oy * g->stride_h - g->pad_top;                              \
                const int32_t fy_start = y0 < 0 ? -y0 : 0;                                     \
                const int32_t fy_end =                                                         \
                    g->filter_h < g->input_h - y0 ? g->filter_h : g->input_h - y0;             \
                for (int32_t ox = 0; ox < g->output_w; ++ox) {                                 \
                    const int32_t x0 = ox * g->stride_w - g->pad_left;                         \
                    const int32_t fx_start = x0 < 0 ? -x0 : 0;                                 \
                    const int32_t fx_end =                                                     \
                        g->filter_w < g->input_w - x0 ? g->filter_w : g->input_w - x0;         \
                    const LIM_T count = (LIM_T)((fy_end - fy_start) * (fx_end - fx_start));    \
                    (void)count;                                                               \
                    for (int32_t c0 = 0; c0 < ch; c0 += (BLOCK)) {                             \
                        const int32_t n = ch - c0 < (BLOCK) ? ch - c0 : (BLOCK);               \
                        for (int32_t c = 0; c < n; ++c) {                                      \
                            acc[c] = (INIT);                                                   \
                        }                                                                      \
                        for (int32_t fy = fy_start; fy < fy_end; ++fy) {                       \
                            for (int32_t fx = fx_start; fx < fx_end; ++fx) {                   \
                                const T *px =                                                  \
                                    in_b                                                       \
                                    + ((size_t)(y0 + fy) * g->input_w + (size_t)(x0 + fx)) * ch \
                                    + c0;                                                      \
                                for (int32_t c = 0; c < n; ++c) {                              \
                                    ACCUM(acc[c], px[c]);                                      \
                                }                                                              \
                            }                                                                  \
                        }                                                                      \
                        for (int32_t c = 0; c < n; ++c) {                                      \
                            STORE(output[c0 + c], acc[c], count);                              \
                        }                                                                      \
                    }                                                                          \
                    output += ch;                                                              \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return NNRT_OK;                                                                        \
    }

/** HOOK of a pool without a library path. */
#define NNRT_POOL_NO_HOOK(params, input, output)

/** ACCUM of the max pools: keep the larger tap. */
#define NNRT_POOL_MAX_ACCUM(acc, x)                                                            \
    if ((x) > (acc)) {                                                                         \
        (acc) = (x);                                                                           \
    }

/** STORE of the quantised max pools (element type T): clamp to the activation range. */
#define NNRT_POOL_MAX_STORE_Q(T, dst, acc)                                                     \
    do {                                                                                       \
        T v_ = (acc) < act_min ? act_min : (acc);                                              \
        (dst) = v_ > act_max ? act_max : v_;                                                   \
    } while (0)

/** STORE of the quantised average pools (element type T): the int32 sum divided by the
 *  tap count rounding half away from zero (C99 division truncates toward zero, as TFLM
 *  relies on), clamped to the activation range. */
#define NNRT_POOL_AVG_STORE_Q(T, dst, acc, count)                                              \
    do {                                                                                       \
        int32_t v_ = (acc) > 0 ? ((acc) + (count) / 2) / (count)                               \
                               : ((acc) - (count) / 2) / (count);                              \
        v_ = v_ < act_min ? act_min : v_;                                                      \
        (dst) = (T)(v_ > act_max ? act_max : v_);                                              \
    } while (0)

/** STORE of the float32 pools: min(max(FINISH(acc, count), act_min), act_max) with the
 *  comparison order of std::min/std::max (FINISH: a macro of the accumulator and the
 *  tap count, as float). */
#define NNRT_POOL_F32_STORE(dst, acc, count, FINISH)                                           \
    do {                                                                                       \
        const float r_ = FINISH(acc, count);                                          \
        const float v_ = r_ < act_min ? act_min : r_;                                          \
        (dst) = act_max < v_ ? act_max : v_;                                                   \
    } while (0)

/** A float32 pool NAME (nnrt_pool_f32_params_t, 32-channel blocks). */
#define NNRT_POOL_F32_KERNEL(NAME, INIT, ACCUM, STORE)                                         \
    NNRT_POOL_KERNEL(NAME, nnrt_pool_f32_params_t, float, float, float, 32,                    \
                     NNRT_POOL_F32_PARAMS_BAD, NNRT_POOL_NO_HOOK, INIT, ACCUM, STORE)

#endif /* NNRT_KERNELS_INTERNAL_POOL_WINDOW_H_ */
