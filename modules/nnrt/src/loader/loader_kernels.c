/*
 * Kernel glue of the model loader: decode a step's parameter record into the kernel's
 * own parameter struct (field tables generated from scripts/nnopt/blob/schema.py),
 * check the parameters against the kernel's contract and against the sizes of the
 * tensors it reads and writes, then call the kernel.
 *
 * The checks are what makes a crafted blob harmless: every extent a kernel loops over
 * is bounded by the bytes of the buffer it indexes, every value the kernels use as a
 * shift or an offset is in the documented range, and geometry is bounded so that no
 * coordinate computation overflows int32.
 */
#include <string.h>

#include "blob_schema.h"
#include "loader_internal.h"
#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/shape.h"

#define RD32(p) nnrt_blob_rd32(p)

/* Coordinates in kernels stay within +-2^30. */
#define GEOM_MAX 0xFFFF
#define COORD_MAX ((int64_t)1 << 30)
/* int32 accumulators cannot overflow before the bias: taps x 255 x 255 < 2^31. */
#define MAX_TAPS 32768
/* Average pools sum a window of int8 (or float) values in int32. */
#define MAX_WINDOW ((int64_t)1 << 22)

#define MAX_REFS 2u

typedef struct {
    const uint8_t *rec;
    uint32_t words;   /* words in the record */
    uint32_t pos;     /* next word */
    uint32_t ref_count[MAX_REFS];
    uint32_t n_refs;
    uint32_t opt;     /* value of the last opt field */
} reader_t;

static nnrt_status_t decode(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_field_t *f,
                            uint32_t n, void *out)
{
    uint32_t i;

    if (r->pos + n > r->words) {
        return NNRT_ERR_FORMAT;
    }
    for (i = 0; i < n; i++) {
        uint32_t v = RD32(r->rec + 4u * r->pos++);
        uint8_t *dst = (uint8_t *)out + f[i].offset;

        if (f[i].kind == NNRT_BLOB_F_I32 || f[i].kind == NNRT_BLOB_F_F32) {
            memcpy(dst, &v, sizeof(v)); /* int32_t and float are 4 bytes, same order */
        } else if (f[i].kind == NNRT_BLOB_F_REF) {
            const int32_t *data;
            uint32_t count;
            nnrt_status_t s = nnrt_blob_const_i32(ld, v, &data, &count);

            if (s != NNRT_OK || r->n_refs == MAX_REFS) {
                return NNRT_ERR_FORMAT;
            }
            r->ref_count[r->n_refs++] = count;
            memcpy(dst, &data, sizeof(data));
        } else {
            const void *none = NULL;

            if (v > 1u) {
                return NNRT_ERR_FORMAT;
            }
            r->opt = v;
            memcpy(dst, &none, sizeof(none));
        }
    }
    return NNRT_OK;
}

static int32_t scalar_i32(reader_t *r)
{
    return (int32_t)RD32(r->rec + 4u * r->pos++);
}

static float scalar_f32(reader_t *r)
{
    uint32_t v = RD32(r->rec + 4u * r->pos++);
    float f;

    memcpy(&f, &v, sizeof(f));
    return f;
}

static int in_range(int32_t v, int32_t lo, int32_t hi)
{
    return v >= lo && v <= hi;
}

/* Tensor k present, of dtype, holding at least `elems` elements of `size` bytes. */
static int holds(const nnrt_blob_args_t *a, uint32_t k, nnrt_dtype_t dtype, uint64_t elems,
                 uint32_t size)
{
    return a->present[k] && a->dtype[k] == (uint8_t)dtype &&
           elems * size <= (uint64_t)a->bytes[k];
}

static int axis_ok(int32_t out, int32_t stride, int32_t filter, int32_t dilation, int32_t pad)
{
    return (int64_t)(out - 1) * stride + (int64_t)(filter - 1) * dilation + pad <= COORD_MAX;
}

/*
 * No int32 accumulator can overflow, whatever the input values: for every output
 * channel, 256 * sum(|w + w_off|) over its taps plus |bias| stays below 2^31 (TFLM's
 * arithmetic would wrap otherwise; a crafted blob must not be able to reach that).
 * Weights of channel c are at w[c * c_stride + t * t_stride], t < taps. O(weights):
 * done when the blob is checked, not on every inference.
 */
static int accumulators_ok(const int8_t *w, uint32_t channels, uint32_t taps, size_t c_stride,
                           size_t t_stride, int32_t w_off, const int32_t *bias)
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

static int requant_ok(const int32_t *mult, const int32_t *shift, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (mult[i] < 0 || !in_range(shift[i], -31, 30)) {
            return 0;
        }
    }
    return 1;
}

/* ---- CONV_2D / DEPTHWISE_CONV_2D ----------------------------------------------- */
static int conv_geom_ok(const nnrt_conv_geom_t *g, const nnrt_conv_pool_t *p, int depthwise)
{
    int32_t v[sizeof(nnrt_conv_geom_t) / sizeof(int32_t)];
    uint32_t i;

    memcpy(v, g, sizeof(v)); /* all int32_t fields */
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        if (!in_range(v[i], 0, GEOM_MAX)) {
            return 0;
        }
    }
    if (!nnrt_conv_geom_valid(g, p, depthwise) ||
        !axis_ok(g->output_h, g->stride_h, g->filter_h, g->dilation_h, g->pad_top) ||
        !axis_ok(g->output_w, g->stride_w, g->filter_w, g->dilation_w, g->pad_left) ||
        (int64_t)g->filter_h * g->filter_w * (depthwise ? 1 : g->filter_c) > MAX_TAPS) {
        return 0;
    }
    if (p != NULL) {
        int32_t q[8];

        memcpy(q, p, sizeof(q)); /* output_h .. pad_left: the first eight int32_t */
        for (i = 0; i < 8u; i++) {
            if (!in_range(q[i], 0, GEOM_MAX)) {
                return 0;
            }
        }
        if (!axis_ok(p->output_h, p->stride_h, p->filter_h, 1, p->pad_top) ||
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

/* Which int8 convolution kernel: the reference-capable ones or a fast variant. */
#define CONV_ANY 0
#define CONV_1X1 1
#define CONV_IM2COL 2

/* A fast variant's preconditions and its scratch argument (arg 4). */
static int variant_ok(const nnrt_conv_s8_params_t *p, const nnrt_blob_args_t *a, int variant)
{
    const nnrt_conv_geom_t *g = &p->geom;
    size_t need;

    if (variant == CONV_ANY) {
        return 1;
    }
    if (p->pool != NULL || g->filter_c != g->input_c) {
        return 0;
    }
    if (variant == CONV_1X1) {
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

static nnrt_status_t conv_s8(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                             int depthwise, int variant, int run)
{
    nnrt_conv_s8_params_t p;
    nnrt_conv_pool_t pool;
    uint64_t e[4];
    nnrt_status_t s;
    uint32_t need;

    s = decode(ld, r, nnrt_conv_s8_params_fields, NNRT_CONV_S8_PARAMS_FIELDS, &p);
    if (s == NNRT_OK && r->opt) {
        s = decode(ld, r, nnrt_conv_pool_fields, NNRT_CONV_POOL_FIELDS, &pool);
        p.pool = &pool;
    }
    if (s != NNRT_OK || r->pos != r->words || !conv_geom_ok(&p.geom, p.pool, depthwise)) {
        return NNRT_ERR_FORMAT;
    }
    conv_sizes(&p.geom, p.pool, depthwise, e);
    need = p.per_channel ? (uint32_t)p.geom.output_c : 1u;
    if (!holds(a, 0, NNRT_INT8, e[0], 1) || !holds(a, 1, NNRT_INT8, e[1], 1) ||
        (a->present[2] && !holds(a, 2, NNRT_INT32, e[2], 4)) ||
        !holds(a, 3, NNRT_INT8, e[3], 1) ||
        !in_range(p.input_offset, -127, 128) || !in_range(p.output_offset, -128, 127) ||
        !in_range(p.act_min, -128, 127) || !in_range(p.act_max, p.act_min, 127) ||
        !in_range(p.per_channel, 0, 1) || r->ref_count[0] < need || r->ref_count[1] < need ||
        !requant_ok(p.multiplier, p.shift, need) || !variant_ok(&p, a, variant)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        const nnrt_conv_geom_t *g = &p.geom;
        uint32_t taps = (uint32_t)(g->filter_h * g->filter_w * (depthwise ? 1 : g->filter_c));
        uint32_t oc = (uint32_t)g->output_c;

        if (a->ptr[1] == NULL || (a->present[2] && a->ptr[2] == NULL)) {
            return NNRT_ERR_FORMAT; /* weights and bias must be constants */
        }
        /* conv filter [OC][taps]; depthwise [taps][OC] */
        return accumulators_ok((const int8_t *)a->ptr[1], oc, taps, depthwise ? 1u : taps,
                               depthwise ? oc : 1u, 0, (const int32_t *)a->ptr[2])
                   ? NNRT_OK : NNRT_ERR_FORMAT;
    }
    if (depthwise) {
        return nnrt_depthwise_conv2d_s8(&p, (const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                                        (const int32_t *)a->ptr[2], (int8_t *)a->ptr[3]);
    }
    if (variant == CONV_1X1) {
        return nnrt_conv2d_1x1_s8(&p, (const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                                  (const int32_t *)a->ptr[2], (int8_t *)a->ptr[3], a->ptr[4]);
    }
    if (variant == CONV_IM2COL) {
        return nnrt_conv2d_im2col_s8(&p, (const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                                     (const int32_t *)a->ptr[2], (int8_t *)a->ptr[3],
                                     a->ptr[4]);
    }
    return nnrt_conv2d_s8(&p, (const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                          (const int32_t *)a->ptr[2], (int8_t *)a->ptr[3]);
}

static nnrt_status_t conv_f32(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                              int depthwise, int run)
{
    nnrt_conv_f32_params_t p;
    nnrt_conv_pool_t pool;
    uint64_t e[4];
    nnrt_status_t s;

    s = decode(ld, r, nnrt_conv_f32_params_fields, NNRT_CONV_F32_PARAMS_FIELDS, &p);
    if (s == NNRT_OK && r->opt) {
        s = decode(ld, r, nnrt_conv_pool_fields, NNRT_CONV_POOL_FIELDS, &pool);
        p.pool = &pool;
    }
    if (s != NNRT_OK || r->pos != r->words || !conv_geom_ok(&p.geom, p.pool, depthwise)) {
        return NNRT_ERR_FORMAT;
    }
    conv_sizes(&p.geom, p.pool, depthwise, e);
    if (!holds(a, 0, NNRT_FLOAT32, e[0], 4) || !holds(a, 1, NNRT_FLOAT32, e[1], 4) ||
        (a->present[2] && !holds(a, 2, NNRT_FLOAT32, e[2], 4)) ||
        !holds(a, 3, NNRT_FLOAT32, e[3], 4)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    if (depthwise) {
        return nnrt_depthwise_conv2d_f32(&p, (const float *)a->ptr[0], (const float *)a->ptr[1],
                                         (const float *)a->ptr[2], (float *)a->ptr[3]);
    }
    return nnrt_conv2d_f32(&p, (const float *)a->ptr[0], (const float *)a->ptr[1],
                           (const float *)a->ptr[2], (float *)a->ptr[3]);
}

/* ---- FULLY_CONNECTED ----------------------------------------------------------- */
static int fc_dims_ok(int32_t batches, int32_t depth, int32_t units)
{
    return in_range(batches, 1, 0x7FFFFFFF) && in_range(depth, 1, MAX_TAPS) &&
           in_range(units, 1, 0x7FFFFFFF);
}

static nnrt_status_t fc_s8(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                           int run)
{
    nnrt_fc_s8_params_t p;
    uint32_t need;

    if (decode(ld, r, nnrt_fc_s8_params_fields, NNRT_FC_S8_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || !fc_dims_ok(p.batches, p.accum_depth, p.output_depth)) {
        return NNRT_ERR_FORMAT;
    }
    need = p.per_channel ? (uint32_t)p.output_depth : 1u;
    if (!holds(a, 0, NNRT_INT8, (uint64_t)p.batches * (uint64_t)p.accum_depth, 1) ||
        !holds(a, 1, NNRT_INT8, (uint64_t)p.output_depth * (uint64_t)p.accum_depth, 1) ||
        (a->present[2] && !holds(a, 2, NNRT_INT32, (uint64_t)p.output_depth, 4)) ||
        !holds(a, 3, NNRT_INT8, (uint64_t)p.batches * (uint64_t)p.output_depth, 1) ||
        !in_range(p.input_offset, -127, 128) || !in_range(p.weights_offset, -127, 128) ||
        !in_range(p.output_offset, -128, 127) || !in_range(p.act_min, -128, 127) ||
        !in_range(p.act_max, p.act_min, 127) || !in_range(p.per_channel, 0, 1) ||
        r->ref_count[0] < need || r->ref_count[1] < need ||
        !requant_ok(p.multiplier, p.shift, need)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        if (a->ptr[1] == NULL || (a->present[2] && a->ptr[2] == NULL)) {
            return NNRT_ERR_FORMAT; /* weights and bias must be constants */
        }
        return accumulators_ok((const int8_t *)a->ptr[1], (uint32_t)p.output_depth,
                               (uint32_t)p.accum_depth, (size_t)p.accum_depth, 1u,
                               p.weights_offset, (const int32_t *)a->ptr[2])
                   ? NNRT_OK : NNRT_ERR_FORMAT;
    }
    return nnrt_fully_connected_s8(&p, (const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                                   (const int32_t *)a->ptr[2], (int8_t *)a->ptr[3]);
}

static nnrt_status_t fc_f32(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                            int run)
{
    nnrt_fc_f32_params_t p;

    if (decode(ld, r, nnrt_fc_f32_params_fields, NNRT_FC_F32_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || !fc_dims_ok(p.batches, p.accum_depth, p.output_depth)) {
        return NNRT_ERR_FORMAT;
    }
    if (!holds(a, 0, NNRT_FLOAT32, (uint64_t)p.batches * (uint64_t)p.accum_depth, 4) ||
        !holds(a, 1, NNRT_FLOAT32, (uint64_t)p.output_depth * (uint64_t)p.accum_depth, 4) ||
        (a->present[2] && !holds(a, 2, NNRT_FLOAT32, (uint64_t)p.output_depth, 4)) ||
        !holds(a, 3, NNRT_FLOAT32, (uint64_t)p.batches * (uint64_t)p.output_depth, 4)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    return nnrt_fully_connected_f32(&p, (const float *)a->ptr[0], (const float *)a->ptr[1],
                                    (const float *)a->ptr[2], (float *)a->ptr[3]);
}

/* ---- MAX_POOL_2D / AVERAGE_POOL_2D --------------------------------------------- */
static int pool_ok(const nnrt_pool_geom_t *g, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                   uint32_t size)
{
    int32_t v[sizeof(nnrt_pool_geom_t) / sizeof(int32_t)];
    uint32_t i;

    memcpy(v, g, sizeof(v)); /* all int32_t fields */
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        if (!in_range(v[i], 0, GEOM_MAX)) {
            return 0;
        }
    }
    return nnrt_pool_geom_valid(g) && (int64_t)g->filter_h * g->filter_w <= MAX_WINDOW &&
           axis_ok(g->output_h, g->stride_h, g->filter_h, 1, g->pad_top) &&
           axis_ok(g->output_w, g->stride_w, g->filter_w, 1, g->pad_left) &&
           holds(a, 0, dt, (uint64_t)g->batches * (uint64_t)g->input_h * (uint64_t)g->input_w *
                 (uint64_t)g->channels, size) &&
           holds(a, 1, dt, (uint64_t)g->batches * (uint64_t)g->output_h *
                 (uint64_t)g->output_w * (uint64_t)g->channels, size);
}

static nnrt_status_t pool_s8(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                             int max, int run)
{
    nnrt_pool_s8_params_t p;

    if (decode(ld, r, nnrt_pool_s8_params_fields, NNRT_POOL_S8_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || !pool_ok(&p.geom, a, NNRT_INT8, 1) ||
        !in_range(p.act_min, -128, 127) || !in_range(p.act_max, p.act_min, 127)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    return max ? nnrt_maxpool2d_s8(&p, (const int8_t *)a->ptr[0], (int8_t *)a->ptr[1])
               : nnrt_avgpool2d_s8(&p, (const int8_t *)a->ptr[0], (int8_t *)a->ptr[1]);
}

static nnrt_status_t pool_f32(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                              int max, int run)
{
    nnrt_pool_f32_params_t p;

    if (decode(ld, r, nnrt_pool_f32_params_fields, NNRT_POOL_F32_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || !pool_ok(&p.geom, a, NNRT_FLOAT32, 4)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    return max ? nnrt_maxpool2d_f32(&p, (const float *)a->ptr[0], (float *)a->ptr[1])
               : nnrt_avgpool2d_f32(&p, (const float *)a->ptr[0], (float *)a->ptr[1]);
}

/* ---- SOFTMAX ------------------------------------------------------------------- */
static nnrt_status_t softmax_s8(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                                int out16, int run)
{
    nnrt_softmax_s8_params_t p;
    int32_t rows;
    int32_t depth;

    if (decode(ld, r, nnrt_softmax_s8_params_fields, NNRT_SOFTMAX_S8_PARAMS_FIELDS, &p) !=
            NNRT_OK || r->pos + 2u != r->words) {
        return NNRT_ERR_FORMAT;
    }
    rows = scalar_i32(r);
    depth = scalar_i32(r);
    if (rows < 0 || depth < 1 || p.input_multiplier < 0 || !in_range(p.input_left_shift, 0, 31) ||
        p.diff_min > 0 || !holds(a, 0, NNRT_INT8, (uint64_t)rows * (uint64_t)depth, 1) ||
        !holds(a, 1, out16 ? NNRT_INT16 : NNRT_INT8, (uint64_t)rows * (uint64_t)depth,
               out16 ? 2u : 1u)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    if (out16) {
        return nnrt_softmax_s8_s16(&p, (const int8_t *)a->ptr[0], (int16_t *)a->ptr[1], rows,
                                   depth);
    }
    return nnrt_softmax_s8(&p, (const int8_t *)a->ptr[0], (int8_t *)a->ptr[1], rows, depth);
}

static nnrt_status_t softmax_f32(reader_t *r, const nnrt_blob_args_t *a, int run)
{
    float beta;
    int32_t rows;
    int32_t depth;

    if (r->words != 3u) {
        return NNRT_ERR_FORMAT;
    }
    beta = scalar_f32(r);
    rows = scalar_i32(r);
    depth = scalar_i32(r);
    if (rows < 0 || depth < 1 ||
        !holds(a, 0, NNRT_FLOAT32, (uint64_t)rows * (uint64_t)depth, 4) ||
        !holds(a, 1, NNRT_FLOAT32, (uint64_t)rows * (uint64_t)depth, 4)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    return nnrt_softmax_f32(beta, (const float *)a->ptr[0], (float *)a->ptr[1], rows, depth);
}

/* ---- strided index spaces (broadcasts, MEAN) ------------------------------------ */
/*
 * A walk over `rank` dims with non-negative strides: the number of points, or 0 when
 * a field is out of range; `*last` receives the largest offset it reaches. Every
 * extent times its stride stays below 2^30, so kernels' ptrdiff_t arithmetic (32 bits
 * on Cortex-M) cannot overflow.
 */
static uint64_t walk(int32_t rank, const int32_t *dims, const int32_t *strides, uint64_t *last)
{
    uint64_t points = 1u;
    int32_t d;

    *last = 0u;
    if (rank < 1 || rank > NNRT_MAX_DIMS) {
        return 0u;
    }
    for (d = 0; d < rank; d++) {
        if (dims[d] < 1 || strides[d] < 0 ||
            (uint64_t)dims[d] * (uint64_t)strides[d] > (uint64_t)COORD_MAX) {
            return 0u;
        }
        points *= (uint64_t)dims[d];
        *last += (uint64_t)(dims[d] - 1) * (uint64_t)strides[d];
        if (points > (uint64_t)COORD_MAX) {
            return 0u;
        }
    }
    return points;
}

/* Broadcast of input1 (arg 0) and input2 (arg 1) to the output (arg 2). */
static int bcast_ok(const nnrt_broadcast_t *b, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                    uint32_t size)
{
    uint64_t last1;
    uint64_t last2;
    uint64_t n = walk(b->rank, b->dims, b->stride1, &last1);

    if (n == 0u || walk(b->rank, b->dims, b->stride2, &last2) != n) {
        return 0;
    }
    return holds(a, 0, dt, last1 + 1u, size) && holds(a, 1, dt, last2 + 1u, size) &&
           holds(a, 2, dt, n, size);
}

static nnrt_status_t binary_s8(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                               uint32_t kernel, int run)
{
    const int8_t *x1 = (const int8_t *)a->ptr[0];
    const int8_t *x2 = (const int8_t *)a->ptr[1];
    int8_t *y = (int8_t *)a->ptr[2];

    if (kernel == NNRT_BLOB_K_ADD_S8 || kernel == NNRT_BLOB_K_SUB_S8) {
        nnrt_add_s8_params_t p;

        if (decode(ld, r, nnrt_add_s8_params_fields, NNRT_ADD_S8_PARAMS_FIELDS, &p) != NNRT_OK ||
            r->pos != r->words || !bcast_ok(&p.bcast, a, NNRT_INT8, 1) ||
            !in_range(p.input1_offset, -127, 128) || !in_range(p.input2_offset, -127, 128) ||
            !in_range(p.left_shift, 0, 21) || p.input1_multiplier < 0 ||
            p.input2_multiplier < 0 || p.output_multiplier < 0 ||
            !in_range(p.input1_shift, -31, 0) || !in_range(p.input2_shift, -31, 0) ||
            !in_range(p.output_shift, -31, 0) || !in_range(p.output_offset, -128, 127) ||
            !in_range(p.act_min, -128, 127) || !in_range(p.act_max, p.act_min, 127)) {
            return NNRT_ERR_FORMAT;
        }
        if (!run) {
            return NNRT_OK;
        }
        return kernel == NNRT_BLOB_K_ADD_S8 ? nnrt_add_s8(&p, x1, x2, y)
                                            : nnrt_sub_s8(&p, x1, x2, y);
    }
    if (kernel == NNRT_BLOB_K_MUL_S8) {
        nnrt_mul_s8_params_t p;

        if (decode(ld, r, nnrt_mul_s8_params_fields, NNRT_MUL_S8_PARAMS_FIELDS, &p) != NNRT_OK ||
            r->pos != r->words || !bcast_ok(&p.bcast, a, NNRT_INT8, 1) ||
            !in_range(p.input1_offset, -127, 128) || !in_range(p.input2_offset, -127, 128) ||
            p.output_multiplier < 0 || !in_range(p.output_shift, -31, 30) ||
            !in_range(p.output_offset, -128, 127) || !in_range(p.act_min, -128, 127) ||
            !in_range(p.act_max, p.act_min, 127)) {
            return NNRT_ERR_FORMAT;
        }
        return run ? nnrt_mul_s8(&p, x1, x2, y) : NNRT_OK;
    } else {
        nnrt_broadcast_t b;

        if (decode(ld, r, nnrt_broadcast_fields, NNRT_BROADCAST_FIELDS, &b) != NNRT_OK ||
            r->pos != r->words || !bcast_ok(&b, a, NNRT_INT8, 1)) {
            return NNRT_ERR_FORMAT;
        }
        if (!run) {
            return NNRT_OK;
        }
        return kernel == NNRT_BLOB_K_MAXIMUM_S8 ? nnrt_maximum_s8(&b, x1, x2, y)
                                                : nnrt_minimum_s8(&b, x1, x2, y);
    }
}

static nnrt_status_t binary_f32(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                                uint32_t kernel, int run)
{
    const float *x1 = (const float *)a->ptr[0];
    const float *x2 = (const float *)a->ptr[1];
    float *y = (float *)a->ptr[2];

    if (kernel == NNRT_BLOB_K_MAXIMUM_F32 || kernel == NNRT_BLOB_K_MINIMUM_F32) {
        nnrt_broadcast_t b;

        if (decode(ld, r, nnrt_broadcast_fields, NNRT_BROADCAST_FIELDS, &b) != NNRT_OK ||
            r->pos != r->words || !bcast_ok(&b, a, NNRT_FLOAT32, 4)) {
            return NNRT_ERR_FORMAT;
        }
        if (!run) {
            return NNRT_OK;
        }
        return kernel == NNRT_BLOB_K_MAXIMUM_F32 ? nnrt_maximum_f32(&b, x1, x2, y)
                                                 : nnrt_minimum_f32(&b, x1, x2, y);
    } else {
        nnrt_binary_f32_params_t p;

        if (decode(ld, r, nnrt_binary_f32_params_fields, NNRT_BINARY_F32_PARAMS_FIELDS, &p) !=
                NNRT_OK ||
            r->pos != r->words || !bcast_ok(&p.bcast, a, NNRT_FLOAT32, 4)) {
            return NNRT_ERR_FORMAT;
        }
        if (!run) {
            return NNRT_OK;
        }
        if (kernel == NNRT_BLOB_K_ADD_F32) {
            return nnrt_add_f32(&p, x1, x2, y);
        }
        return kernel == NNRT_BLOB_K_SUB_F32 ? nnrt_sub_f32(&p, x1, x2, y)
                                             : nnrt_mul_f32(&p, x1, x2, y);
    }
}

/* MEAN: every output point's reduced walk stays inside the input. */
static int mean_ok(const nnrt_mean_geom_t *g, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                   uint32_t size, uint64_t *reduced)
{
    uint64_t last_o;
    uint64_t last_r;
    uint64_t n_out = walk(g->outer_rank, g->outer_dims, g->outer_strides, &last_o);

    *reduced = walk(g->reduce_rank, g->reduce_dims, g->reduce_strides, &last_r);
    return n_out != 0u && *reduced != 0u && holds(a, 0, dt, last_o + last_r + 1u, size) &&
           holds(a, 1, dt, n_out, size);
}

static nnrt_status_t mean(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                          int s8, int run)
{
    uint64_t reduced;

    if (s8) {
        nnrt_mean_s8_params_t p;

        /* the int32 sum of the reduced int8 values and zero_point * count fit */
        if (decode(ld, r, nnrt_mean_s8_params_fields, NNRT_MEAN_S8_PARAMS_FIELDS, &p) !=
                NNRT_OK ||
            r->pos != r->words || !mean_ok(&p.geom, a, NNRT_INT8, 1, &reduced) ||
            reduced > ((uint64_t)1 << 22) || !in_range(p.count, 1, 1 << 22) ||
            !in_range(p.input_zero_point, -128, 127) || !in_range(p.output_zero_point, -128, 127) ||
            p.multiplier < 0 || !in_range(p.shift, -31, 31)) {
            return NNRT_ERR_FORMAT;
        }
        return run ? nnrt_mean_s8(&p, (const int8_t *)a->ptr[0], (int8_t *)a->ptr[1]) : NNRT_OK;
    } else {
        nnrt_mean_geom_t g;

        if (decode(ld, r, nnrt_mean_geom_fields, NNRT_MEAN_GEOM_FIELDS, &g) != NNRT_OK ||
            r->pos != r->words || !mean_ok(&g, a, NNRT_FLOAT32, 4, &reduced)) {
            return NNRT_ERR_FORMAT;
        }
        return run ? nnrt_mean_f32(&g, (const float *)a->ptr[0], (float *)a->ptr[1]) : NNRT_OK;
    }
}

/* ---- activations ------------------------------------------------------------------ */
static nnrt_status_t activation(reader_t *r, const nnrt_blob_args_t *a, uint32_t kernel, int run)
{
    int32_t lo = 0;
    int32_t hi = 0;
    int32_t n;

    if (kernel == NNRT_BLOB_K_TABLE_LOOKUP_S8) {
        if (r->words != 1u) {
            return NNRT_ERR_FORMAT;
        }
        n = scalar_i32(r);
        if (n < 0 || !holds(a, 0, NNRT_INT8, 256u, 1) || !holds(a, 1, NNRT_INT8, (uint64_t)n, 1) ||
            !holds(a, 2, NNRT_INT8, (uint64_t)n, 1)) {
            return NNRT_ERR_FORMAT;
        }
        return run ? nnrt_table_lookup_s8((const int8_t *)a->ptr[0], (const int8_t *)a->ptr[1],
                                          (int8_t *)a->ptr[2], n)
                   : NNRT_OK;
    }
    if (kernel == NNRT_BLOB_K_CLAMP_S8) {
        if (r->words != 3u) {
            return NNRT_ERR_FORMAT;
        }
        lo = scalar_i32(r);
        hi = scalar_i32(r);
        n = scalar_i32(r);
        if (n < 0 || !in_range(lo, -128, 127) || !in_range(hi, lo, 127) ||
            !holds(a, 0, NNRT_INT8, (uint64_t)n, 1) || !holds(a, 1, NNRT_INT8, (uint64_t)n, 1)) {
            return NNRT_ERR_FORMAT;
        }
        return run ? nnrt_clamp_s8(lo, hi, (const int8_t *)a->ptr[0], (int8_t *)a->ptr[1], n)
                   : NNRT_OK;
    }
    if (r->words != 1u) {
        return NNRT_ERR_FORMAT;
    }
    n = scalar_i32(r);
    if (n < 0 || !holds(a, 0, NNRT_FLOAT32, (uint64_t)n, 4) ||
        !holds(a, 1, NNRT_FLOAT32, (uint64_t)n, 4)) {
        return NNRT_ERR_FORMAT;
    }
    if (!run) {
        return NNRT_OK;
    }
    switch (kernel) {
    case NNRT_BLOB_K_RELU_F32:
        return nnrt_relu_f32((const float *)a->ptr[0], (float *)a->ptr[1], n);
    case NNRT_BLOB_K_RELU6_F32:
        return nnrt_relu6_f32((const float *)a->ptr[0], (float *)a->ptr[1], n);
    case NNRT_BLOB_K_LOGISTIC_F32:
        return nnrt_logistic_f32((const float *)a->ptr[0], (float *)a->ptr[1], n);
    case NNRT_BLOB_K_TANH_F32:
        return nnrt_tanh_f32((const float *)a->ptr[0], (float *)a->ptr[1], n);
    default:
        return nnrt_hard_swish_f32((const float *)a->ptr[0], (float *)a->ptr[1], n);
    }
}

/* ---- CONCATENATION: inputs 0..n-2, output n-1 ---------------------------------- */
static nnrt_status_t concat(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                            int run)
{
    nnrt_concat_params_t p;
    const void *inputs[NNRT_BLOB_MAX_ARGS];
    uint64_t total = 0u;
    uint32_t n = a->n - 1u;
    uint32_t i;

    if (decode(ld, r, nnrt_concat_params_fields, NNRT_CONCAT_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || p.outer < 1 || p.num_inputs != (int32_t)n ||
        r->ref_count[0] < n || !a->present[n]) {
        return NNRT_ERR_FORMAT;
    }
    for (i = 0; i < n; i++) {
        if (p.block_bytes[i] < 0 || !a->present[i] ||
            (uint64_t)p.outer * (uint64_t)p.block_bytes[i] > a->bytes[i]) {
            return NNRT_ERR_FORMAT;
        }
        total += (uint64_t)p.block_bytes[i];
        inputs[i] = a->ptr[i];
    }
    if ((uint64_t)p.outer * total > a->bytes[n]) {
        return NNRT_ERR_FORMAT;
    }
    return run ? nnrt_concat_x8(&p, inputs, a->ptr[n]) : NNRT_OK;
}

/* ---- PAD / PADV2: input 0, pad value 1 (one element), output 2 ------------------- */
static nnrt_status_t pad(const nnrt_loader_t *ld, reader_t *r, const nnrt_blob_args_t *a,
                         int run)
{
    nnrt_pad_params_t p;
    uint64_t in = 1u;
    uint64_t out = 1u;
    int32_t d;

    if (decode(ld, r, nnrt_pad_params_fields, NNRT_PAD_PARAMS_FIELDS, &p) != NNRT_OK ||
        r->pos != r->words || p.rank < 1 || p.rank > NNRT_PAD_MAX_DIMS ||
        (p.elem_size != 1 && p.elem_size != 2 && p.elem_size != 4)) {
        return NNRT_ERR_FORMAT;
    }
    for (d = 0; d < p.rank; d++) {
        if (!in_range(p.input_dims[d], 1, GEOM_MAX) || !in_range(p.before[d], 0, GEOM_MAX) ||
            !in_range(p.after[d], 0, GEOM_MAX)) {
            return NNRT_ERR_FORMAT;
        }
        in *= (uint64_t)p.input_dims[d];
        out *= (uint64_t)p.before[d] + (uint64_t)p.input_dims[d] + (uint64_t)p.after[d];
        if (out > (uint64_t)COORD_MAX) {
            return NNRT_ERR_FORMAT;
        }
    }
    if (!a->present[0] || !a->present[1] || !a->present[2] ||
        in * (uint64_t)p.elem_size > a->bytes[0] || (uint32_t)p.elem_size > a->bytes[1] ||
        out * (uint64_t)p.elem_size > a->bytes[2]) {
        return NNRT_ERR_FORMAT;
    }
    return run ? nnrt_pad_x8(&p, a->ptr[0], a->ptr[1], a->ptr[2]) : NNRT_OK;
}

/* ---- TRANSPOSE / SLICE / STRIDED_SLICE: a strided view of input 0 into output 1 -- */
static nnrt_status_t strided_copy(const nnrt_loader_t *ld, reader_t *r,
                                  const nnrt_blob_args_t *a, int run)
{
    nnrt_strided_copy_params_t p;
    int64_t lo;
    int64_t hi;
    uint64_t points = 1u;
    int32_t d;

    if (decode(ld, r, nnrt_strided_copy_params_fields, NNRT_STRIDED_COPY_PARAMS_FIELDS, &p) !=
            NNRT_OK ||
        r->pos != r->words || p.rank < 1 || p.rank > NNRT_MAX_DIMS ||
        (p.elem_size != 1 && p.elem_size != 2 && p.elem_size != 4) ||
        !in_range(p.offset, 0, (int32_t)COORD_MAX)) {
        return NNRT_ERR_FORMAT;
    }
    lo = p.offset;
    hi = p.offset;
    for (d = 0; d < p.rank; d++) {
        int64_t span;

        if (!in_range(p.dims[d], 1, GEOM_MAX) ||
            !in_range(p.strides[d], -(int32_t)COORD_MAX, (int32_t)COORD_MAX)) {
            return NNRT_ERR_FORMAT;
        }
        span = (int64_t)(p.dims[d] - 1) * p.strides[d];
        if (span < 0) {
            lo += span;
        } else {
            hi += span;
        }
        points *= (uint64_t)p.dims[d];
        if (points > (uint64_t)COORD_MAX || hi > COORD_MAX || lo < -COORD_MAX) {
            return NNRT_ERR_FORMAT;
        }
    }
    /* every element read lies in [lo, hi + elem_size) of the input */
    if (lo < 0 || !a->present[0] || !a->present[1] ||
        (uint64_t)hi + (uint64_t)p.elem_size > a->bytes[0] ||
        points * (uint64_t)p.elem_size > a->bytes[1]) {
        return NNRT_ERR_FORMAT;
    }
    return run ? nnrt_strided_copy_x8(&p, a->ptr[0], a->ptr[1]) : NNRT_OK;
}

/* ---- RESHAPE and friends, when not aliased: a byte copy ------------------------- */
static nnrt_status_t copy_x8(reader_t *r, const nnrt_blob_args_t *a, int run)
{
    uint32_t bytes;

    if (r->words != 1u) {
        return NNRT_ERR_FORMAT;
    }
    bytes = (uint32_t)scalar_i32(r);
    if (!a->present[0] || !a->present[1] || bytes > a->bytes[0] || bytes > a->bytes[1]) {
        return NNRT_ERR_FORMAT;
    }
    return run ? nnrt_copy_x8(a->ptr[0], a->ptr[1], bytes) : NNRT_OK;
}

nnrt_status_t nnrt_blob_kernel(const nnrt_loader_t *ld, uint32_t kernel, const uint8_t *rec,
                               uint32_t rec_bytes, const nnrt_blob_args_t *args, int run)
{
    reader_t r;

    memset(&r, 0, sizeof(r));
    r.rec = rec;
    r.words = rec_bytes / 4u;
    if (kernel >= NNRT_BLOB_K_COUNT ||
        !nnrt_blob_args_fit(args->n, nnrt_blob_kernel_shape[kernel][0])) {
        return NNRT_ERR_FORMAT;
    }
    switch (kernel) {
    case NNRT_BLOB_K_CONV2D_S8:
        return conv_s8(ld, &r, args, 0, CONV_ANY, run);
    case NNRT_BLOB_K_DEPTHWISE_CONV2D_S8:
        return conv_s8(ld, &r, args, 1, CONV_ANY, run);
    case NNRT_BLOB_K_CONV2D_1X1_S8:
        return conv_s8(ld, &r, args, 0, CONV_1X1, run);
    case NNRT_BLOB_K_CONV2D_IM2COL_S8:
        return conv_s8(ld, &r, args, 0, CONV_IM2COL, run);
    case NNRT_BLOB_K_CONV2D_F32:
        return conv_f32(ld, &r, args, 0, run);
    case NNRT_BLOB_K_DEPTHWISE_CONV2D_F32:
        return conv_f32(ld, &r, args, 1, run);
    case NNRT_BLOB_K_FULLY_CONNECTED_S8:
        return fc_s8(ld, &r, args, run);
    case NNRT_BLOB_K_FULLY_CONNECTED_F32:
        return fc_f32(ld, &r, args, run);
    case NNRT_BLOB_K_MAXPOOL2D_S8:
        return pool_s8(ld, &r, args, 1, run);
    case NNRT_BLOB_K_AVGPOOL2D_S8:
        return pool_s8(ld, &r, args, 0, run);
    case NNRT_BLOB_K_MAXPOOL2D_F32:
        return pool_f32(ld, &r, args, 1, run);
    case NNRT_BLOB_K_AVGPOOL2D_F32:
        return pool_f32(ld, &r, args, 0, run);
    case NNRT_BLOB_K_SOFTMAX_S8:
        return softmax_s8(ld, &r, args, 0, run);
    case NNRT_BLOB_K_SOFTMAX_S8_S16:
        return softmax_s8(ld, &r, args, 1, run);
    case NNRT_BLOB_K_SOFTMAX_F32:
        return softmax_f32(&r, args, run);
    case NNRT_BLOB_K_COPY_X8:
        return copy_x8(&r, args, run);
    case NNRT_BLOB_K_CONCAT_X8:
        return concat(ld, &r, args, run);
    case NNRT_BLOB_K_PAD_X8:
        return pad(ld, &r, args, run);
    case NNRT_BLOB_K_STRIDED_COPY_X8:
        return strided_copy(ld, &r, args, run);
    case NNRT_BLOB_K_ADD_S8:
    case NNRT_BLOB_K_SUB_S8:
    case NNRT_BLOB_K_MUL_S8:
    case NNRT_BLOB_K_MAXIMUM_S8:
    case NNRT_BLOB_K_MINIMUM_S8:
        return binary_s8(ld, &r, args, kernel, run);
    case NNRT_BLOB_K_ADD_F32:
    case NNRT_BLOB_K_SUB_F32:
    case NNRT_BLOB_K_MUL_F32:
    case NNRT_BLOB_K_MAXIMUM_F32:
    case NNRT_BLOB_K_MINIMUM_F32:
        return binary_f32(ld, &r, args, kernel, run);
    case NNRT_BLOB_K_MEAN_S8:
        return mean(ld, &r, args, 1, run);
    case NNRT_BLOB_K_MEAN_F32:
        return mean(ld, &r, args, 0, run);
    case NNRT_BLOB_K_TABLE_LOOKUP_S8:
    case NNRT_BLOB_K_CLAMP_S8:
    case NNRT_BLOB_K_RELU_F32:
    case NNRT_BLOB_K_RELU6_F32:
    case NNRT_BLOB_K_LOGISTIC_F32:
    case NNRT_BLOB_K_TANH_F32:
    case NNRT_BLOB_K_HARD_SWISH_F32:
        return activation(&r, args, kernel, run);
    default:
        return NNRT_ERR_UNSUPPORTED;
    }
}
