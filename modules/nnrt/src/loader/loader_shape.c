/*
 * Loader checks of the data-movement family (RESHAPE & co. copied, CONCATENATION,
 * PAD/PADV2, TRANSPOSE/SLICE/STRIDED_SLICE as strided copies), called by the generated
 * kernel table (blob_dispatch.c) after it decoded the record: the kernels' own
 * contract (nnrt_concat_check() & co., nnrt/kernels/shape.h), then every byte read or
 * written lies in its tensor.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/shape.h"

#define in_range nnrt_blob_in_range

/* RESHAPE and friends, when not aliased: a byte copy; scalar: bytes */
nnrt_status_t nnrt_blob_check_copy_x8(nnrt_blob_call_t *c)
{
    const nnrt_blob_args_t *a = c->args;
    const uint32_t bytes = c->sc[0].u;

    return a->present[0] && a->present[1] && bytes <= a->bytes[0] && bytes <= a->bytes[1]
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* inputs 0..n-2, output n-1 */
nnrt_status_t nnrt_blob_check_concat_x8(nnrt_blob_call_t *c, const nnrt_concat_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    uint64_t total = 0u;
    uint32_t n = a->n - 1u;
    uint32_t i;

    if (p->num_inputs != (int32_t)n || c->ref_count[0] < n || !a->present[n] ||
        nnrt_concat_check(p) != NNRT_OK) {
        return NNRT_ERR_FORMAT;
    }
    for (i = 0; i < n; i++) {
        if (!a->present[i] ||
            (uint64_t)p->outer * (uint64_t)p->block_bytes[i] > a->bytes[i]) {
            return NNRT_ERR_FORMAT;
        }
        total += (uint64_t)p->block_bytes[i];
    }
    return (uint64_t)p->outer * total > a->bytes[n] ? NNRT_ERR_FORMAT : NNRT_OK;
}

/* input 0, pad value 1 (one element), output 2 */
nnrt_status_t nnrt_blob_check_pad_x8(nnrt_blob_call_t *c, const nnrt_pad_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    uint64_t in = 1u;
    uint64_t out = 1u;
    int32_t d;

    if (nnrt_pad_check(p) != NNRT_OK) {
        return NNRT_ERR_FORMAT;
    }
    for (d = 0; d < p->rank; d++) {
        if (p->input_dims[d] > NNRT_BLOB_GEOM_MAX || p->before[d] > NNRT_BLOB_GEOM_MAX ||
            p->after[d] > NNRT_BLOB_GEOM_MAX) {
            return NNRT_ERR_FORMAT;
        }
        in *= (uint64_t)p->input_dims[d];
        out *= (uint64_t)p->before[d] + (uint64_t)p->input_dims[d] + (uint64_t)p->after[d];
        if (out > (uint64_t)NNRT_BLOB_COORD_MAX) {
            return NNRT_ERR_FORMAT;
        }
    }
    if (!a->present[0] || !a->present[1] || !a->present[2] ||
        in * (uint64_t)p->elem_size > a->bytes[0] || (uint32_t)p->elem_size > a->bytes[1] ||
        out * (uint64_t)p->elem_size > a->bytes[2]) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

/* a strided view of input 0 into output 1 */
nnrt_status_t nnrt_blob_check_strided_copy_x8(nnrt_blob_call_t *c,
                                              const nnrt_strided_copy_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    int64_t lo;
    int64_t hi;
    uint64_t points = 1u;
    int32_t d;

    if (nnrt_strided_copy_check(p) != NNRT_OK || p->offset > (int32_t)NNRT_BLOB_COORD_MAX) {
        return NNRT_ERR_FORMAT;
    }
    lo = p->offset;
    hi = p->offset;
    for (d = 0; d < p->rank; d++) {
        int64_t span;

        if (p->dims[d] > NNRT_BLOB_GEOM_MAX ||
            !in_range(p->strides[d], -(int32_t)NNRT_BLOB_COORD_MAX,
                      (int32_t)NNRT_BLOB_COORD_MAX)) {
            return NNRT_ERR_FORMAT;
        }
        span = (int64_t)(p->dims[d] - 1) * p->strides[d];
        if (span < 0) {
            lo += span;
        } else {
            hi += span;
        }
        points *= (uint64_t)p->dims[d];
        if (points > (uint64_t)NNRT_BLOB_COORD_MAX || hi > NNRT_BLOB_COORD_MAX ||
            lo < -NNRT_BLOB_COORD_MAX) {
            return NNRT_ERR_FORMAT;
        }
    }
    /* every element read lies in [lo, hi + elem_size) of the input */
    if (lo < 0 || !a->present[0] || !a->present[1] ||
        (uint64_t)hi + (uint64_t)p->elem_size > a->bytes[0] ||
        points * (uint64_t)p->elem_size > a->bytes[1]) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}
