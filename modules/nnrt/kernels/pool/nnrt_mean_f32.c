/*
 * float32 MEAN over any axes, TFLM's reference Mean: for each output, the reduced
 * elements are summed in increasing input address order starting from 0.0f, then the
 * sum is divided by the element count converted to float.
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"

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

static float reduce_sum(const nnrt_mean_geom_t *g, const float *base)
{
    const int32_t last = g->reduce_rank - 1;
    const int32_t n = g->reduce_dims[last];
    const int32_t s = g->reduce_strides[last];
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    float sum = 0.0f;
    for (;;) {
        const float *p = base;
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

nnrt_status_t nnrt_mean_f32(const nnrt_mean_geom_t *geom, const float *input, float *output)
{
    if (geom == NULL || input == NULL || output == NULL || !mean_geom_valid(geom)) {
        return NNRT_ERR_ARG;
    }
    int32_t count = 1;
    for (int32_t d = 0; d < geom->reduce_rank; ++d) {
        count *= geom->reduce_dims[d];
    }
    const float fcount = (float)count;
    int32_t idx[NNRT_MEAN_MAX_DIMS] = {0};
    const float *base = input;
    for (;;) {
        *output++ = reduce_sum(geom, base) / fcount;
        int32_t d = geom->outer_rank - 1;
        for (; d >= 0; --d) {
            base += geom->outer_strides[d];
            if (++idx[d] < geom->outer_dims[d]) {
                break;
            }
            base -= (ptrdiff_t)geom->outer_strides[d] * geom->outer_dims[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return NNRT_OK;
        }
    }
}
