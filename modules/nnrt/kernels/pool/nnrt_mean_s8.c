/*
 * int8 MEAN over any axes, TFLM's reference QuantizedMeanOrSum: the int32 sum of the
 * reduced elements, minus zero_point * count, times a multiplier that already holds the
 * division by the count (computed at build time exactly as TFLM does), plus the output
 * zero point, clamped to [-128, 127] (internal/mean.h).
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/quant.h"
#include "../internal/mean.h"

NNRT_MEAN_SUM_FN(reduce_sum, int8_t, int32_t, 0)

static inline int8_t requantize(const nnrt_mean_s8_params_t *params, int32_t sum)
{
    const int32_t v = nnrt_multiply_by_quantized_multiplier(sum, params->multiplier,
                                                            params->shift)
                      + params->output_zero_point;
    return (int8_t)nnrt_clamp_i32(v, INT8_MIN, INT8_MAX);
}

nnrt_status_t nnrt_mean_s8(const nnrt_mean_s8_params_t *params, const int8_t *input,
                           int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL
        || !nnrt_reduce_geom_valid(&params->geom) || params->count < 1 || params->shift > 31
        || params->shift < -31) {
        return NNRT_ERR_ARG;
    }
    const nnrt_mean_geom_t *g = &params->geom;
    const int32_t zp_sum = params->input_zero_point * params->count;
    NNRT_MEAN_WALK(int8_t, g, input, output,
                   *output++ = requantize(params, reduce_sum(g, base) - zp_sum));
}
