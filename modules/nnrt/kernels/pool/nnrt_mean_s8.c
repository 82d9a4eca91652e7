/*
 * int8 MEAN over any axes, TFLM's reference QuantizedMeanOrSum: the int32 sum of the
 * reduced elements, minus zero_point * count, times a multiplier that already holds the
 * division by the count (computed at build time exactly as TFLM does), plus the output
 * zero point, clamped to [-128, 127].
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/quant.h"

static int mean_geom_valid(const nnrt_mean_geom_t *g)
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

/* Sum of the reduced index space rooted at `base`, visited in row-major order. */
static int32_t reduce_sum(const nnrt_mean_geom_t *g, const int8_t *base)
{
    const int32_t last = g->reduce_rank - 1;
    const int32_t n = g->reduce_dims[last];
    const int32_t s = g->reduce_strides[last];
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    int32_t sum = 0;
    for (;;) {
        const int8_t *p = base;
        for (int32_t i = 0; i < n; ++i) {
            sum += p[(ptrdiff_t)i * s];
        }
        int32_t d = last - 1;
        for (; d >= 0; --d) {
            base += g->reduce_strides[d];
            if (++idx[d] < g->reduce_dims[d]) {
                break;
            }
            base -= (ptrdiff_t)g->reduce_strides[d] * g->reduce_dims[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return sum;
        }
    }
}

nnrt_status_t nnrt_mean_s8(const nnrt_mean_s8_params_t *params, const int8_t *input,
                           int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL || !mean_geom_valid(&params->geom)
        || params->count < 1 || params->shift > 31 || params->shift < -31) {
        return NNRT_ERR_ARG;
    }
    const nnrt_mean_geom_t *g = &params->geom;
    const int32_t zp_sum = params->input_zero_point * params->count;
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    const int8_t *base = input;
    for (;;) {
        const int32_t sum = reduce_sum(g, base) - zp_sum;
        int32_t v = nnrt_multiply_by_quantized_multiplier(sum, params->multiplier,
                                                          params->shift)
                    + params->output_zero_point;
        *output++ = (int8_t)nnrt_clamp_i32(v, INT8_MIN, INT8_MAX);
        int32_t d = g->outer_rank - 1;
        for (; d >= 0; --d) {
            base += g->outer_strides[d];
            if (++idx[d] < g->outer_dims[d]) {
                break;
            }
            base -= (ptrdiff_t)g->outer_strides[d] * g->outer_dims[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return NNRT_OK;
        }
    }
}
