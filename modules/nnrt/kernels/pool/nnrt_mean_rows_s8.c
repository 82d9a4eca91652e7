/*
 * int8 MEAN over rows and columns in row bands (pool.h): int32 partial sums carried from
 * band to band, then nnrt_mean_s8's requantisation, TFLM's QuantizedMeanOrSum: (sum -
 * input zero point * count) times the multiplier (the division by the count folded in),
 * plus the output zero point, clamped to [-128, 127] (internal/pool_rows.h).
 */
#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/quant.h"
#include "../internal/pool_rows.h"

#define BAD(p) ((p)->shift > 31 || (p)->shift < -31 || (p)->act_min != INT8_MIN                \
                || (p)->act_max != INT8_MAX)
#define STORE(dst, acc, count)                                                                 \
    do {                                                                                       \
        const int32_t v_ = nnrt_multiply_by_quantized_multiplier(                              \
                               (acc) - params->input_zero_point * (count), params->multiplier,  \
                               params->shift)                                                  \
                           + params->output_zero_point;                                        \
        (dst) = (int8_t)nnrt_clamp_i32(v_, act_min, act_max);                                  \
    } while (0)

NNRT_POOL_ROWS_KERNEL(nnrt_mean_rows_s8, nnrt_mean_rows_s8_params_t, int8_t, int32_t, int32_t,
                      BAD, STORE)
