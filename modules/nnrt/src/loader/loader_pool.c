/*
 * Loader checks of the pooling family (MAX_POOL_2D, AVERAGE_POOL_2D, MEAN; int8 and
 * float32), called by the generated kernel table (blob_dispatch.c) after it decoded
 * the record. The kernels' own contract is nnrt_pool_*_check() (nnrt/kernels/pool.h);
 * here the tensors' sizes and the loader's bounds.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/pool.h"

#define in_range nnrt_blob_in_range
#define holds nnrt_blob_holds
#define axis_ok nnrt_blob_axis_ok

static int pool_ok(const nnrt_pool_geom_t *g, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                   uint32_t size)
{
    return nnrt_blob_geom_fields_ok(g, sizeof(*g) / sizeof(int32_t)) &&
           (int64_t)g->filter_h * g->filter_w <= NNRT_BLOB_MAX_WINDOW &&
           axis_ok(g->output_h, g->stride_h, g->filter_h, 1, g->pad_top) &&
           axis_ok(g->output_w, g->stride_w, g->filter_w, 1, g->pad_left) &&
           holds(a, 0, dt, (uint64_t)g->batches * (uint64_t)g->input_h * (uint64_t)g->input_w *
                 (uint64_t)g->channels, size) &&
           holds(a, 1, dt, (uint64_t)g->batches * (uint64_t)g->output_h *
                 (uint64_t)g->output_w * (uint64_t)g->channels, size);
}

nnrt_status_t nnrt_blob_check_pool_s8(nnrt_blob_call_t *c, const nnrt_pool_s8_params_t *p)
{
    return nnrt_pool_s8_check(p) == NNRT_OK && pool_ok(&p->geom, c->args, NNRT_INT8, 1)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

nnrt_status_t nnrt_blob_check_pool_s16(nnrt_blob_call_t *c, const nnrt_pool_s8_params_t *p)
{
    return nnrt_pool_s16_check(p) == NNRT_OK && pool_ok(&p->geom, c->args, NNRT_INT16, 2)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

nnrt_status_t nnrt_blob_check_pool_f32(nnrt_blob_call_t *c, const nnrt_pool_f32_params_t *p)
{
    return nnrt_pool_f32_check(p) == NNRT_OK && pool_ok(&p->geom, c->args, NNRT_FLOAT32, 4)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* MEAN: every output point's reduced walk stays inside the input. */
static int mean_ok(const nnrt_mean_geom_t *g, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                   uint32_t size, uint64_t *reduced)
{
    uint64_t last_o;
    uint64_t last_r;
    uint64_t n_out = nnrt_blob_walk(g->outer_rank, g->outer_dims, g->outer_strides, &last_o);

    *reduced = nnrt_blob_walk(g->reduce_rank, g->reduce_dims, g->reduce_strides, &last_r);
    return n_out != 0u && *reduced != 0u && holds(a, 0, dt, last_o + last_r + 1u, size) &&
           holds(a, 1, dt, n_out, size);
}

nnrt_status_t nnrt_blob_check_mean_s8(nnrt_blob_call_t *c, const nnrt_mean_s8_params_t *p)
{
    uint64_t reduced;

    /* the int32 sum of the reduced int8 values and zero_point * count fit */
    if (!mean_ok(&p->geom, c->args, NNRT_INT8, 1, &reduced) ||
        reduced > ((uint64_t)1 << 22) || !in_range(p->count, 1, 1 << 22) ||
        !in_range(p->input_zero_point, -128, 127) || !in_range(p->output_zero_point, -128, 127) ||
        p->multiplier < 0 || !in_range(p->shift, -31, 31)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_mean_f32(nnrt_blob_call_t *c, const nnrt_mean_geom_t *p)
{
    uint64_t reduced;

    return mean_ok(p, c->args, NNRT_FLOAT32, 4, &reduced) ? NNRT_OK : NNRT_ERR_FORMAT;
}
