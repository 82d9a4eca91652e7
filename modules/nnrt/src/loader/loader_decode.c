/*
 * The record decoder of the model loader and the checks several kernel families share
 * (loader_check.h). The per-kernel glue that calls them is generated
 * (blob_dispatch.c); the per-family checks are in loader_<family>.c.
 */
#include <string.h>

#include "blob_tensor.h"
#include "loader_check.h"

#define RD32(p) nnrt_blob_rd32(p)

void nnrt_blob_call_init(nnrt_blob_call_t *c, const nnrt_loader_t *ld, uint32_t kernel,
                         const uint8_t *rec, uint32_t rec_bytes, const nnrt_blob_args_t *args,
                         int run)
{
    memset(c, 0, sizeof(*c));
    c->ld = ld;
    c->args = args;
    c->kernel = kernel;
    c->run = run;
    c->rec = rec;
    c->words = rec_bytes / 4u;
}

nnrt_status_t nnrt_blob_decode(nnrt_blob_call_t *c, const nnrt_blob_field_t *f, uint32_t n,
                               void *out)
{
    uint32_t i;

    if (c->pos + n > c->words) {
        return NNRT_ERR_FORMAT;
    }
    for (i = 0; i < n; i++) {
        uint32_t v = RD32(c->rec + 4u * c->pos++);
        uint8_t *dst = (uint8_t *)out + f[i].offset;

        if (f[i].kind == NNRT_BLOB_F_I32 || f[i].kind == NNRT_BLOB_F_F32) {
            memcpy(dst, &v, sizeof(v)); /* int32_t and float are 4 bytes, same order */
        } else if (f[i].kind == NNRT_BLOB_F_REF) {
            const int32_t *data;
            uint32_t count;
            nnrt_status_t s = nnrt_blob_const_i32(c->ld, v, &data, &count);

            if (s != NNRT_OK || c->n_refs == NNRT_BLOB_MAX_REFS) {
                return NNRT_ERR_FORMAT;
            }
            c->ref_count[c->n_refs++] = count;
            memcpy(dst, &data, sizeof(data));
        } else {
            const void *none = NULL;

            if (v > 1u) {
                return NNRT_ERR_FORMAT;
            }
            c->opt = v;
            memcpy(dst, &none, sizeof(none));
        }
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_scalars(nnrt_blob_call_t *c, uint32_t n)
{
    uint32_t i;

    if (n > NNRT_BLOB_MAX_SCALARS || c->pos + n > c->words) {
        return NNRT_ERR_FORMAT;
    }
    for (i = 0; i < n; i++) {
        c->sc[i].u = RD32(c->rec + 4u * c->pos++);
    }
    return NNRT_OK;
}

int nnrt_blob_geom_fields_ok(const void *geom, size_t words)
{
    int32_t v[24];
    size_t i;

    if (words > sizeof(v) / sizeof(v[0])) {
        return 0;
    }
    memcpy(v, geom, words * sizeof(int32_t)); /* all int32_t fields */
    for (i = 0; i < words; i++) {
        if (!nnrt_blob_in_range(v[i], 0, NNRT_BLOB_GEOM_MAX)) {
            return 0;
        }
    }
    return 1;
}

int nnrt_blob_accumulators_ok(const int8_t *w, uint32_t channels, uint32_t taps,
                              size_t c_stride, size_t t_stride, int32_t w_off,
                              const int32_t *bias)
{
    uint32_t c;
    uint32_t t;

    for (c = 0; c < channels; c++) {
        int64_t sum = bias != NULL ? (bias[c] < 0 ? -(int64_t)bias[c] : (int64_t)bias[c]) : 0;

        for (t = 0; t < taps; t++) {
            int32_t v = (int32_t)w[c * c_stride + t * t_stride] + w_off;

            sum += 256 * (int64_t)(v < 0 ? -v : v);
        }
        if (sum > 0x7FFFFFFF) {
            return 0;
        }
    }
    return 1;
}

int nnrt_blob_requant_ok(const int32_t *mult, const int32_t *shift, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (mult[i] < 0 || !nnrt_blob_in_range(shift[i], -31, 30)) {
            return 0;
        }
    }
    return 1;
}

uint64_t nnrt_blob_walk(int32_t rank, const int32_t *dims, const int32_t *strides,
                        uint64_t *last)
{
    uint64_t points = 1u;
    int32_t d;

    *last = 0u;
    if (rank < 1 || rank > NNRT_MAX_DIMS) {
        return 0u;
    }
    for (d = 0; d < rank; d++) {
        if (dims[d] < 1 || strides[d] < 0 ||
            (uint64_t)dims[d] * (uint64_t)strides[d] > (uint64_t)NNRT_BLOB_COORD_MAX) {
            return 0u;
        }
        points *= (uint64_t)dims[d];
        *last += (uint64_t)(dims[d] - 1) * (uint64_t)strides[d];
        if (points > (uint64_t)NNRT_BLOB_COORD_MAX) {
            return 0u;
        }
    }
    return points;
}
