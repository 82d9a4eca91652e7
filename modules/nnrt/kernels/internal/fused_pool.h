/*
 * Internal to the nnrt kernels: the one window driver of the reference convolutions
 * (conv and depthwise, int8 and float32), with the optional max pool folded into the
 * output (nnrt_conv_pool_t, see conv.h).
 *
 * Without a pool every output pixel of every batch is computed in order. With one,
 * each pool output starts at the type's lowest value, every convolution pixel of its
 * window (clipped to the convolution output) is max-accumulated into it, then the
 * pool's activation range clamps it: TFLM's conv followed by its max pool, without
 * the intermediate tensor.
 *
 * A macro, not a function: each kernel expands it with its own pixel function, so the
 * compiler generates exactly the code of the loop written out in the kernel (no
 * indirect call, the same inlining decisions).
 */
#ifndef NNRT_KERNELS_INTERNAL_FUSED_POOL_H_
#define NNRT_KERNELS_INTERNAL_FUSED_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

/**
 * The conv output rows [*start, *end) of pool output row (or column) `p`: the pool
 * window at p * stride - pad, clipped to the `extent` conv outputs along that axis.
 */
static inline void nnrt_pool_window(int32_t p, int32_t stride, int32_t pad, int32_t filter,
                                    int32_t extent, int32_t *start, int32_t *end)
{
    const int32_t w0 = p * stride - pad;
    *start = w0 < 0 ? 0 : w0;
    *end = w0 + filter < extent ? w0 + filter : extent;
}

/**
 * Drive a reference convolution over its output, pool fused or not.
 *
 * @param T       element type of input and output (int8_t, float)
 * @param g       const nnrt_conv_geom_t *
 * @param pool    const nnrt_conv_pool_t * (NULL: no pool)
 * @param input   const T *: batch 0 of the input
 * @param output  T *: advanced past the written output
 * @param LOWEST  the value a pool output starts from (INT8_MIN, -FLT_MAX)
 * @param PIXEL   PIXEL(in_b, oy, ox, out, max): one convolution pixel into out[0..oc)
 *                (max != 0: max-accumulate into it)
 * @param CLAMP   CLAMP(out, c): statements clamping out[c] to the pool's activation
 *                range
 */
#define NNRT_CONV_POOL_DRIVE(T, g, pool, input, output, LOWEST, PIXEL, CLAMP)                 \
    do {                                                                                     \
        const size_t in_batch_ = (size_t)(g)->input_h * (size_t)(g)->input_w                \
                                 * (size_t)(g)->input_c;                                     \
        const int32_t oc_n_ = (g)->output_c;                                                 \
        for (int32_t b_ = 0; b_ < (g)->batches; ++b_) {                                      \
            const T *in_b_ = (input) + (size_t)b_ * in_batch_;                               \
            if ((pool) == NULL) {                                                            \
                for (int32_t oy_ = 0; oy_ < (g)->output_h; ++oy_) {                          \
                    for (int32_t ox_ = 0; ox_ < (g)->output_w; ++ox_) {                      \
                        PIXEL(in_b_, oy_, ox_, (output), 0);                                 \
                        (output) += oc_n_;                                                   \
                    }                                                                        \
                }                                                                            \
                continue;                                                                    \
            }                                                                                \
            for (int32_t py_ = 0; py_ < (pool)->output_h; ++py_) {                           \
                int32_t wy_start_, wy_end_;                                                  \
                nnrt_pool_window(py_, (pool)->stride_h, (pool)->pad_top, (pool)->filter_h,   \
                                 (g)->output_h, &wy_start_, &wy_end_);                       \
                for (int32_t px_ = 0; px_ < (pool)->output_w; ++px_) {                       \
                    int32_t wx_start_, wx_end_;                                              \
                    nnrt_pool_window(px_, (pool)->stride_w, (pool)->pad_left,                \
                                     (pool)->filter_w, (g)->output_w, &wx_start_, &wx_end_); \
                    for (int32_t c_ = 0; c_ < oc_n_; ++c_) {                                 \
                        (output)[c_] = (LOWEST);                                             \
                    }                                                                        \
                    for (int32_t oy_ = wy_start_; oy_ < wy_end_; ++oy_) {                    \
                        for (int32_t ox_ = wx_start_; ox_ < wx_end_; ++ox_) {                \
                            PIXEL(in_b_, oy_, ox_, (output), 1);                             \
                        }                                                                    \
                    }                                                                        \
                    for (int32_t c_ = 0; c_ < oc_n_; ++c_) {                                 \
                        CLAMP((output), c_);                                                 \
                    }                                                                        \
                    (output) += oc_n_;                                                       \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)


/**
 * A whole float32 convolution kernel (conv: DEPTHWISE 0, depthwise: 1), `nnrt_status_t
 * NAME(const nnrt_conv_f32_params_t *params, const float *input, const float *filter,
 * const float *bias, float *output)`: NNRT_ERR_ARG for a NULL pointer, an invalid
 * geometry or an unordered activation range (its own or the fused pool's), else
 * NNRT_CONV_POOL_DRIVE() over the pixel the including file defines as
 * NNRT_CONV_F32_PIXEL_(in_b, oy, ox, out, max) (its function of params, filter and
 * bias), the fused pool's output clamped as std::min(std::max(x, lo), hi).
 */
#define NNRT_CONV_F32_KERNEL(NAME, DEPTHWISE)                                                \
    nnrt_status_t NAME(const nnrt_conv_f32_params_t *params, const float *input,             \
                       const float *filter, const float *bias, float *output)                \
    {                                                                                        \
        if (params == NULL || input == NULL || filter == NULL || output == NULL              \
            || !nnrt_conv_geom_valid(&params->geom, params->pool, DEPTHWISE)                 \
            || !(params->act_min <= params->act_max)) {                                      \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const nnrt_conv_geom_t *g = &params->geom;                                           \
        const nnrt_conv_pool_t *pool = params->pool;                                         \
        if (pool != NULL && !(pool->act_min_f <= pool->act_max_f)) {                         \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        NNRT_CONV_POOL_DRIVE(float, g, pool, input, output, -FLT_MAX,                        \
                             NNRT_CONV_F32_PIXEL_, NNRT_CONV_F32_CLAMP_);                     \
        return NNRT_OK;                                                                      \
    }
#define NNRT_CONV_F32_CLAMP_(out, c)                                                         \
    float v = out[c] < pool->act_min_f ? pool->act_min_f : out[c];                           \
    out[c] = pool->act_max_f < v ? pool->act_max_f : v

#endif /* NNRT_KERNELS_INTERNAL_FUSED_POOL_H_ */
