/*
 * Dense copy of a view whose input offset is separable per output axis (MIRROR_PAD,
 * BATCH_TO_SPACE_ND): offset = sum over dims of that dim's table entry. Rows whose
 * innermost table steps by one element are copied with one memcpy; other rows run by
 * run (a run: consecutive entries one element apart, e.g. the unpadded middle of a
 * MIRROR_PAD row), a lone element by a fixed-size copy the compiler inlines.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

static void copy_element(uint8_t *out, const uint8_t *in, size_t es)
{
    if (es == 4u) {
        memcpy(out, in, 4u);
    } else if (es == 2u) {
        memcpy(out, in, 2u);
    } else {
        *out = *in;
    }
}

/* One row of n elements, element i from in + inner[i]. */
static void copy_runs(uint8_t *out, const uint8_t *in, const int32_t *inner, size_t n,
                      size_t es)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1u;
        while (j < n && inner[j] == inner[j - 1u] + (int32_t)es) {
            ++j;
        }
        if (j - i == 1u) {
            copy_element(out + i * es, in + inner[i], es);
        } else {
            memcpy(out + i * es, in + inner[i], (j - i) * es);
        }
        i = j;
    }
}

nnrt_status_t nnrt_gather_axes_x8(const nnrt_gather_axes_params_t *params, const void *input,
                                  void *output)
{
    if (params == NULL || input == NULL || output == NULL || params->offsets == NULL
        || params->rank < 1 || params->rank > NNRT_MAX_DIMS
        || (params->elem_size != 1 && params->elem_size != 2 && params->elem_size != 4)) {
        return NNRT_ERR_ARG;
    }
    int32_t base[NNRT_MAX_DIMS];
    int32_t total = 0;
    for (int32_t d = 0; d < params->rank; ++d) {
        if (params->dims[d] < 1) {
            return NNRT_ERR_ARG;
        }
        base[d] = total;
        total += params->dims[d];
    }
    for (int32_t k = 0; k < total; ++k) {
        if (params->offsets[k] < 0) {
            return NNRT_ERR_ARG;
        }
    }
    const int32_t last = params->rank - 1;
    const size_t n = (size_t)params->dims[last];
    const size_t es = (size_t)params->elem_size;
    const int32_t *inner = params->offsets + base[last];
    int contiguous = 1;
    for (size_t i = 1; i < n; ++i) {
        if (inner[i] != inner[0] + (int32_t)(i * es)) {
            contiguous = 0;
            break;
        }
    }
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    int32_t idx[NNRT_MAX_DIMS] = {0};
    for (;;) {
        int32_t row = 0;
        for (int32_t d = 0; d < last; ++d) {
            row += params->offsets[base[d] + idx[d]];
        }
        if (contiguous) {
            memcpy(out, in + row + inner[0], n * es);
        } else {
            copy_runs(out, in + row, inner, n, es);
        }
        out += n * es;
        int32_t d = last - 1;
        for (; d >= 0; --d) {
            if (++idx[d] < params->dims[d]) {
                break;
            }
            idx[d] = 0;
        }
        if (d < 0) {
            return NNRT_OK;
        }
    }
}
