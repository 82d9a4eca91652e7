/*
 * PAD/PADV2 of any element type: every output row (innermost dimension) is either all
 * padding, or leading padding + one input row + trailing padding. Padding is written by
 * repeated doubling memcpy of the pad element, so no alignment is assumed.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

static void fill(uint8_t *dst, const uint8_t *value, size_t elem_size, size_t count)
{
    const size_t total = elem_size * count;
    if (total == 0) {
        return;
    }
    if (elem_size == 1) {
        memset(dst, value[0], total);
        return;
    }
    memcpy(dst, value, elem_size);
    size_t done = elem_size;
    while (done < total) {
        const size_t chunk = done < total - done ? done : total - done;
        memcpy(dst + done, dst, chunk);
        done += chunk;
    }
}

nnrt_status_t nnrt_pad_x8(const nnrt_pad_params_t *params, const void *input,
                          const void *pad_value, void *output)
{
    if (params == NULL || input == NULL || pad_value == NULL || output == NULL
        || params->rank < 1 || params->rank > NNRT_PAD_MAX_DIMS
        || (params->elem_size != 1 && params->elem_size != 2 && params->elem_size != 4)) {
        return NNRT_ERR_ARG;
    }
    const int32_t rank = params->rank;
    const size_t es = (size_t)params->elem_size;
    int32_t out_dims[NNRT_PAD_MAX_DIMS];
    size_t in_strides[NNRT_PAD_MAX_DIMS]; /* in elements */
    size_t rows = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        if (params->input_dims[d] < 1 || params->before[d] < 0 || params->after[d] < 0) {
            return NNRT_ERR_ARG;
        }
        out_dims[d] = params->before[d] + params->input_dims[d] + params->after[d];
        in_strides[d] = d == rank - 1 ? 1 : in_strides[d + 1] * (size_t)params->input_dims[d + 1];
        if (d < rank - 1) {
            rows *= (size_t)out_dims[d];
        }
    }
    const uint8_t *in = (const uint8_t *)input;
    const uint8_t *value = (const uint8_t *)pad_value;
    uint8_t *out = (uint8_t *)output;
    const int32_t last = rank - 1;
    const size_t row_elems = (size_t)out_dims[last];
    int32_t idx[NNRT_PAD_MAX_DIMS] = {0};

    for (size_t r = 0; r < rows; ++r) {
        int inside = 1;
        size_t in_off = 0;
        for (int32_t d = 0; d < last; ++d) {
            const int32_t i = idx[d] - params->before[d];
            if (i < 0 || i >= params->input_dims[d]) {
                inside = 0;
                break;
            }
            in_off += (size_t)i * in_strides[d];
        }
        if (!inside) {
            fill(out, value, es, row_elems);
        } else {
            const size_t lead = (size_t)params->before[last];
            const size_t body = (size_t)params->input_dims[last];
            fill(out, value, es, lead);
            memcpy(out + lead * es, in + in_off * es, body * es);
            fill(out + (lead + body) * es, value, es, (size_t)params->after[last]);
        }
        out += row_elems * es;
        for (int32_t d = last - 1; d >= 0; --d) {
            if (++idx[d] < out_dims[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    return NNRT_OK;
}
