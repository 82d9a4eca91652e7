/*
 * int16 MEAN and SUM over any axes (pool.h), TFLM's reference QuantizedMeanOrSum for
 * int16: the int32 sum of the reduced elements, minus zero_point * count, times the
 * build-time multiplier (for MEAN already holding the division by the count, as TFLM
 * computes it; for SUM the plain s_in / s_out), plus the output zero point, clamped to
 * [-32768, 32767]. count <= 32767 keeps the int32 sum exact. The walk is the MEAN
 * kernels' one (internal/mean.h).
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/quant.h"
#include "../internal/mean.h"

NNRT_MEAN_SUM_FN(reduce_sum, int16_t, int32_t, 0)

static inline int16_t requantize(const nnrt_mean_s16_params_t *params, int32_t sum)
{
    const int32_t v = nnrt_multiply_by_quantized_multiplier(sum, params->multiplier,
                                                            params->shift)
                      + params->output_zero_point;
    return (int16_t)nnrt_clamp_i32(v, INT16_MIN, INT16_MAX);
}

nnrt_status_t nnrt_mean_s16(const nnrt_mean_s16_params_t *params, const int16_t *input,
                            int16_t *output)
{
    if (params == NULL || input == NULL || output == NULL
        || !nnrt_reduce_geom_valid(&params->geom) || params->count < 1
        || params->count > INT16_MAX || params->shift > 31 || params->shift < -31
        || params->input_zero_point < INT16_MIN || params->input_zero_point > INT16_MAX
        || params->output_zero_point < INT16_MIN || params->output_zero_point > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    const nnrt_mean_geom_t *g = &params->geom;
    const int32_t zp_sum = params->input_zero_point * params->count;
    NNRT_MEAN_WALK(int16_t, g, input, output,
                   *output++ = requantize(params, reduce_sum(g, base) - zp_sum));
}
