/*
 * Loader checks of FULLY_CONNECTED (int8, float32), called by the generated kernel
 * table (blob_dispatch.c) after it decoded the record: the kernel's own contract
 * (nnrt_fc_s8_check(), nnrt/kernels/fc.h), then tensor sizes, per-channel
 * requantisation, and no int32 accumulator overflow.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/fc.h"

#define in_range nnrt_blob_in_range
#define holds nnrt_blob_holds

static int fc_dims_ok(int32_t batches, int32_t depth, int32_t units)
{
    return in_range(batches, 1, 0x7FFFFFFF) && in_range(depth, 1, NNRT_BLOB_MAX_TAPS) &&
           in_range(units, 1, 0x7FFFFFFF);
}

nnrt_status_t nnrt_blob_check_fc_s8(nnrt_blob_call_t *c, const nnrt_fc_s8_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    uint32_t need;

    if (nnrt_fc_s8_check(p) != NNRT_OK ||
        !fc_dims_ok(p->batches, p->accum_depth, p->output_depth)) {
        return NNRT_ERR_FORMAT;
    }
    need = p->per_channel ? (uint32_t)p->output_depth : 1u;
    if (!holds(a, 0, NNRT_INT8, (uint64_t)p->batches * (uint64_t)p->accum_depth, 1) ||
        !holds(a, 1, NNRT_INT8, (uint64_t)p->output_depth * (uint64_t)p->accum_depth, 1) ||
        (a->present[2] && !holds(a, 2, NNRT_INT32, (uint64_t)p->output_depth, 4)) ||
        !holds(a, 3, NNRT_INT8, (uint64_t)p->batches * (uint64_t)p->output_depth, 1) ||
        !in_range(p->per_channel, 0, 1) ||
        c->ref_count[0] < need || c->ref_count[1] < need ||
        !nnrt_blob_requant_ok(p->multiplier, p->shift, need)) {
        return NNRT_ERR_FORMAT;
    }
    if (!c->run) {
        if (a->ptr[1] == NULL || (a->present[2] && a->ptr[2] == NULL)) {
            return NNRT_ERR_FORMAT; /* weights and bias must be constants */
        }
        return nnrt_blob_accumulators_ok((const int8_t *)a->ptr[1], (uint32_t)p->output_depth,
                                         (uint32_t)p->accum_depth, (size_t)p->accum_depth, 1u,
                                         p->weights_offset, (const int32_t *)a->ptr[2])
                   ? NNRT_OK : NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_fc_f32(nnrt_blob_call_t *c, const nnrt_fc_f32_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;

    if (!fc_dims_ok(p->batches, p->accum_depth, p->output_depth) ||
        !holds(a, 0, NNRT_FLOAT32, (uint64_t)p->batches * (uint64_t)p->accum_depth, 4) ||
        !holds(a, 1, NNRT_FLOAT32, (uint64_t)p->output_depth * (uint64_t)p->accum_depth, 4) ||
        (a->present[2] && !holds(a, 2, NNRT_FLOAT32, (uint64_t)p->output_depth, 4)) ||
        !holds(a, 3, NNRT_FLOAT32, (uint64_t)p->batches * (uint64_t)p->output_depth, 4)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}
