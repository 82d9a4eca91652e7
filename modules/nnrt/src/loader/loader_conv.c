/*
 * Loader checks of the convolution family (CONV_2D, DEPTHWISE_CONV_2D: int8 incl. the
 * 1x1 / im2col fast kernels with their scratch, fused max pool; float32), called by the
 * generated kernel table (blob_dispatch.c) after it decoded the record. The kernels'
 * own contract is nnrt_conv_s8_check() / nnrt_conv_geom_valid() (nnrt/kernels/conv.h);
 * here the tensors' sizes and the loader's bounds (loader_check.h).
 */
#include <string.h>

#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/conv.h"

#define in_range nnrt_blob_in_range
#define holds nnrt_blob_holds
#define axis_ok nnrt_blob_axis_ok

static int conv_geom_ok(const nnrt_conv_geom_t *g, const nnrt_conv_pool_t *p, int depthwise)
{
    if (!nnrt_blob_geom_fields_ok(g, sizeof(*g) / sizeof(int32_t)) ||
        !nnrt_conv_geom_valid(g, p, depthwise) ||
        !axis_ok(g->output_h, g->stride_h, g->filter_h, g->dilation_h, g->pad_top) ||
        !axis_ok(g->output_w, g->stride_w, g->filter_w, g->dilation_w, g->pad_left) ||
        (int64_t)g->filter_h * g->filter_w * (depthwise ? 1 : g->filter_c) >
            NNRT_BLOB_MAX_TAPS) {
        return 0;
    }
    if (p != NULL) {
        /* output_h .. pad_left: the first eight int32_t */
        if (!nnrt_blob_geom_fields_ok(p, 8u) ||
            !axis_ok(p->output_h, p->stride_h, p->filter_h, 1, p->pad_top) ||
            !axis_ok(p->output_w, p->stride_w, p->filter_w, 1, p->pad_left) ||
            !in_range(p->act_min, -128, 127) || !in_range(p->act_max, p->act_min, 127)) {
            return 0;
        }
    }
    return 1;
}

/* Elements of input, filter, bias and output of a conv geometry. */
static void conv_sizes(const nnrt_conv_geom_t *g, const nnrt_conv_pool_t *p, int depthwise,
                       uint64_t e[4])
{
    e[0] = (uint64_t)g->batches * (uint64_t)g->input_h * (uint64_t)g->input_w *
           (uint64_t)g->input_c;
    e[1] = (uint64_t)g->filter_h * (uint64_t)g->filter_w * (uint64_t)g->output_c *
           (depthwise ? 1u : (uint64_t)g->filter_c);
    e[2] = (uint64_t)g->output_c;
    e[3] = (uint64_t)g->batches * (uint64_t)(p ? p->output_h : g->output_h) *
           (uint64_t)(p ? p->output_w : g->output_w) * (uint64_t)g->output_c;
}

/* A fast variant's preconditions and its scratch argument (arg 4). */
static int variant_ok(const nnrt_conv_s8_params_t *p, const nnrt_blob_args_t *a,
                      uint32_t kernel)
{
    const nnrt_conv_geom_t *g = &p->geom;
    size_t need;

    if (kernel != NNRT_BLOB_K_CONV2D_1X1_S8 && kernel != NNRT_BLOB_K_CONV2D_IM2COL_S8) {
        return 1;
    }
    if (p->pool != NULL || g->filter_c != g->input_c) {
        return 0;
    }
    if (kernel == NNRT_BLOB_K_CONV2D_1X1_S8) {
        if (g->filter_h != 1 || g->filter_w != 1 || g->pad_top != 0 || g->pad_left != 0) {
            return 0;
        }
        need = nnrt_conv2d_1x1_s8_get_buffer_size(p);
    } else {
        need = nnrt_conv2d_im2col_s8_get_buffer_size(p);
    }
    return a->present[4] && a->dtype[4] == (uint8_t)NNRT_INT8 && need <= a->bytes[4] &&
           ((uintptr_t)a->ptr[4] & 3u) == 0u;
}

nnrt_status_t nnrt_blob_check_conv_s8(nnrt_blob_call_t *c, const nnrt_conv_s8_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    const int depthwise = c->kernel == NNRT_BLOB_K_DEPTHWISE_CONV2D_S8;
    uint64_t e[4];
    uint32_t need;

    if (!conv_geom_ok(&p->geom, p->pool, depthwise) ||
        nnrt_conv_s8_check(p, depthwise) != NNRT_OK) {
        return NNRT_ERR_FORMAT;
    }
    conv_sizes(&p->geom, p->pool, depthwise, e);
    need = p->per_channel ? (uint32_t)p->geom.output_c : 1u;
    if (!holds(a, 0, NNRT_INT8, e[0], 1) || !holds(a, 1, NNRT_INT8, e[1], 1) ||
        (a->present[2] && !holds(a, 2, NNRT_INT32, e[2], 4)) ||
        !holds(a, 3, NNRT_INT8, e[3], 1) ||
        !in_range(p->per_channel, 0, 1) || c->ref_count[0] < need || c->ref_count[1] < need ||
        !nnrt_blob_requant_ok(p->multiplier, p->shift, need) || !variant_ok(p, a, c->kernel)) {
        return NNRT_ERR_FORMAT;
    }
    if (!c->run) {
        const nnrt_conv_geom_t *g = &p->geom;
        uint32_t taps = (uint32_t)(g->filter_h * g->filter_w * (depthwise ? 1 : g->filter_c));
        uint32_t oc = (uint32_t)g->output_c;

        if (a->ptr[1] == NULL || (a->present[2] && a->ptr[2] == NULL)) {
            return NNRT_ERR_FORMAT; /* weights and bias must be constants */
        }
        /* conv filter [OC][taps]; depthwise [taps][OC] */
        return nnrt_blob_accumulators_ok((const int8_t *)a->ptr[1], oc, taps,
                                         depthwise ? 1u : taps, depthwise ? oc : 1u, 0,
                                         (const int32_t *)a->ptr[2])
                   ? NNRT_OK : NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_conv_f32(nnrt_blob_call_t *c, const nnrt_conv_f32_params_t *p)
{
    const nnrt_blob_args_t *a = c->args;
    const int depthwise = c->kernel == NNRT_BLOB_K_DEPTHWISE_CONV2D_F32;
    uint64_t e[4];

    if (!conv_geom_ok(&p->geom, p->pool, depthwise)) {
        return NNRT_ERR_FORMAT;
    }
    conv_sizes(&p->geom, p->pool, depthwise, e);
    if (!holds(a, 0, NNRT_FLOAT32, e[0], 4) || !holds(a, 1, NNRT_FLOAT32, e[1], 4) ||
        (a->present[2] && !holds(a, 2, NNRT_FLOAT32, e[2], 4)) ||
        !holds(a, 3, NNRT_FLOAT32, e[3], 4)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}
