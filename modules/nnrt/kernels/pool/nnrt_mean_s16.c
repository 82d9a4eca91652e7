/*
 * int16 MEAN and SUM over any axes (pool.h), TFLM's reference QuantizedMeanOrSum for
 * int16: the int32 sum of the reduced elements, minus zero_point * count, times the
 * build-time multiplier (for MEAN already holding the division by the count, as TFLM
 * computes it; for SUM the plain s_in / s_out), plus the output zero point, clamped to
 * [-32768, 32767]. count <= 32767 keeps the int32 sum exact.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/quant.h"

static int geom_valid(const nnrt_mean_geom_t *g)
{
    if (g->outer_rank < 1 || g->outer_rank > NNRT_MEAN_MAX_DIMS || g->reduce_rank < 1
        || g->reduce_rank > NNRT_MEAN_MAX_DIMS) {
        return 0;
    }
    for (int32_t d = 0; d < g->outer_rank; ++d) {
        if (g->outer_dims[d] < 1 || g->outer_strides[d] < 0) {
            return 0;
        }
    }
    for (int32_t d = 0; d < g->reduce_rank; ++d) {
        if (g->reduce_dims[d] < 1 || g->reduce_strides[d] < 0) {
            return 0;
        }
    }
    return 1;
}

/* Step the index `idx` over the first `rank` dims (row-major),
 * moving `*base` by the strides; 0 once the space is exhausted. */
static int step(const int32_t *dims, const int32_t *strides, int32_t rank, int32_t *idx,
                const int16_t **base)
{
    for (int32_t d = rank - 1; d >= 0; --d) {
        *base += strides[d];
        if (++idx[d] < dims[d]) {
            return 1;
        }
        *base -= (ptrdiff_t)strides[d] * dims[d];
        idx[d] = 0;
    }
    return 0;
}

static int32_t reduce_sum(const nnrt_mean_geom_t *g, const int16_t *base)
{
    const int32_t last = g->reduce_rank - 1;
    const int32_t n = g->reduce_dims[last];
    const int32_t s = g->reduce_strides[last];
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    int32_t sum = 0;
    do {
        for (int32_t i = 0; i < n; ++i) {
            sum += base[(ptrdiff_t)i * s];
        }
    } while (step(g->reduce_dims, g->reduce_strides, last, idx, &base));
    return sum;
}

nnrt_status_t nnrt_mean_s16(const nnrt_mean_s16_params_t *params, const int16_t *input,
                            int16_t *output)
{
    if (params == NULL || input == NULL || output == NULL || !geom_valid(&params->geom)
        || params->count < 1 || params->count > INT16_MAX || params->shift > 31
        || params->shift < -31 || params->input_zero_point < INT16_MIN
        || params->input_zero_point > INT16_MAX || params->output_zero_point < INT16_MIN
        || params->output_zero_point > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    const nnrt_mean_geom_t *g = &params->geom;
    const int32_t zp_sum = params->input_zero_point * params->count;
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    const int16_t *base = input;
    do {
        const int32_t sum = reduce_sum(g, base) - zp_sum;
        const int32_t v = nnrt_multiply_by_quantized_multiplier(sum, params->multiplier,
                                                                params->shift)
                          + params->output_zero_point;
        *output++ = (int16_t)nnrt_clamp_i32(v, INT16_MIN, INT16_MAX);
    } while (step(g->outer_dims, g->outer_strides, g->outer_rank, idx, &base));
    return NNRT_OK;
}
