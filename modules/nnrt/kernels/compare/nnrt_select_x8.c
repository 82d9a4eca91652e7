/*
 * SELECT_V2 with three-way broadcasting (TFLM's reference Select /
 * BroadcastSelect5DSlow): the output is walked in row-major order; each element copies
 * x's or y's element as the condition says, so an output over a same-sized x or y
 * (in place) reads every element before writing it.
 */
#include <stddef.h>
#include <string.h>

#include "nnrt/kernels/compare.h"

static int select_valid(const nnrt_select_params_t *p)
{
    if (p->rank < 1 || p->rank > NNRT_MAX_DIMS
        || (p->elem_bytes != 1 && p->elem_bytes != 2 && p->elem_bytes != 4)) {
        return 0;
    }
    for (int32_t d = 0; d < p->rank; ++d) {
        if (p->dims[d] < 1 || p->stride_c[d] < 0 || p->stride_x[d] < 0 || p->stride_y[d] < 0) {
            return 0;
        }
    }
    return 1;
}

nnrt_status_t nnrt_select_x8(const nnrt_select_params_t *params, const bool *cond,
                             const void *x, const void *y, void *output)
{
    if (params == NULL || cond == NULL || x == NULL || y == NULL || output == NULL
        || !select_valid(params)) {
        return NNRT_ERR_ARG;
    }
    const size_t eb = (size_t)params->elem_bytes;
    const uint8_t *xb = (const uint8_t *)x;
    const uint8_t *yb = (const uint8_t *)y;
    uint8_t *out = (uint8_t *)output;
    const int32_t last = params->rank - 1;
    const int32_t n = params->dims[last];
    int32_t idx[NNRT_MAX_DIMS] = {0};
    ptrdiff_t oc = 0;
    ptrdiff_t ox = 0;
    ptrdiff_t oy = 0;
    for (;;) {
        for (int32_t i = 0; i < n; ++i) {
            const bool c = cond[oc + (ptrdiff_t)i * params->stride_c[last]];
            const uint8_t *src = c ? xb + (size_t)(ox + (ptrdiff_t)i * params->stride_x[last]) * eb
                                   : yb + (size_t)(oy + (ptrdiff_t)i * params->stride_y[last]) * eb;
            memmove(out, src, eb);
            out += eb;
        }
        int32_t d = last - 1;
        for (; d >= 0; --d) {
            oc += params->stride_c[d];
            ox += params->stride_x[d];
            oy += params->stride_y[d];
            if (++idx[d] < params->dims[d]) {
                break;
            }
            oc -= (ptrdiff_t)params->stride_c[d] * params->dims[d];
            ox -= (ptrdiff_t)params->stride_x[d] * params->dims[d];
            oy -= (ptrdiff_t)params->stride_y[d] * params->dims[d];
            idx[d] = 0;
        }
        if (d < 0) {
            return NNRT_OK;
        }
    }
}
