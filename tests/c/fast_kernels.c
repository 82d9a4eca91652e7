#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/inplace.h"
#include "nnrt/kernels/quant.h"
#include "nnrt/port.h"

/* The kernels' private requantisation, checked directly. */
#include "internal/requant.h"

/* Bytes per tensor buffer; cases that need more are drawn again (smaller on the
 * 16 KB Cortex-M0 board: -DMAXB=1024). */
#ifndef MAXB
#define MAXB 8192
#endif
static int8_t in_buf[MAXB];
static int8_t io_buf[MAXB]; /* the in-place kernel's buffer */
static int8_t w_buf[MAXB];
static int8_t out_fast[MAXB];
static int8_t out_ref[MAXB];
static int32_t bias_buf[256];
static int32_t mult_buf[256];
static int32_t shift_buf[256];
static uint32_t scratch_buf[MAXB / 4];

#include "test_rng.h"
#include "test_text.h"
static int32_t rint_(int32_t lo, int32_t hi) /* inclusive */
{
    return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

static uint32_t hash = 2166136261u;
static void hash_bytes(const int8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        hash = (hash ^ (uint8_t)p[i]) * 16777619u;
    }
}

static int fails;
static int32_t in_output; /* generic conv cases whose first pixels take the matrix core */
static char line[160];
static void say(const char *what, int32_t a, int32_t b)
{
    char *p = line;
    const char *s = what;
    while (*s != '\0' && p < line + 100) {
        *p++ = *s++;
    }
    int32_t v[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
        *p++ = ' ';
        put_i64(&p, v[k]);
    }
    *p = '\0';
    nnrt_port_log(line);
}

/* ---- random parameters ---- */
static int32_t rand_shift(void)
{
    switch (rnd() % 10u) {
    case 0: return rint_(-1, 2);    /* reference requantisation */
    case 1: return rint_(-31, -22); /* tiny multipliers, near the fast form's edge */
    default: return rint_(-14, -2);
    }
}

static void rand_quant(int32_t n, int32_t *per_channel)
{
    *per_channel = (int32_t)(rnd() & 1u);
    for (int32_t i = 0; i < n; ++i) {
        mult_buf[i] = (int32_t)((1u << 30) + (rnd() % (1u << 30)));
        shift_buf[i] = rand_shift();
        bias_buf[i] = rint_(-40000, 40000);
        switch (rnd() % 32u) {
        case 0:
        case 1: /* huge, yet no int32 overflow of the sums */
            bias_buf[i] = (int32_t)(rnd() >> 2) - (1 << 29);
            break;
        case 2: /* around 2^30: the depthwise plane path's limit of exact doubled sums */
            bias_buf[i] = (int32_t)((rnd() & 1u) ? 1 : -1) * ((1 << 30) + rint_(-400000, 400000));
            break;
        case 3: /* a dead channel (TFLM's multiplier 0 for a real multiplier below 2^-32) */
            mult_buf[i] = 0;
            break;
        default:
            break;
        }
    }
}

static void rand_act(int32_t *lo, int32_t *hi)
{
    switch (rnd() % 3u) {
    case 0: *lo = -128; *hi = 127; break;
    case 1: *lo = rint_(-128, 20); *hi = 127; break;
    default: *lo = rint_(-128, 0); *hi = rint_(*lo, 127); break;
    }
}

static void rand_data(int8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = (int8_t)(rnd() >> 24);
    }
}

/* Padding and output size of one axis: SAME-like (any pad up to the kernel) or VALID. */
static int rand_axis(int32_t in, int32_t k, int32_t s, int32_t d, int32_t *out, int32_t *pad)
{
    const int32_t eff = (k - 1) * d + 1;
    *pad = (rnd() & 1u) ? rint_(0, eff - 1) : 0;
    const int32_t span = in + *pad * 2 - eff;
    if (span < 0) {
        return 0;
    }
    *out = span / s + 1;
    if ((*out - 1) * s - *pad >= in) {
        return 0;
    }
    return 1;
}

/* ---- the reference: TFLM's loops ---- */
static int32_t rq_ref(int32_t acc, int32_t qi, const nnrt_conv_s8_params_t *p)
{
    acc = nnrt_multiply_by_quantized_multiplier(acc, p->multiplier[qi], p->shift[qi]);
    acc = (int32_t)((uint32_t)acc + (uint32_t)p->output_offset);
    return nnrt_clamp_i32(acc, p->act_min, p->act_max);
}

static void conv_ref(const nnrt_conv_s8_params_t *p, const int8_t *in, const int8_t *w,
                     const int32_t *bias, int8_t *out, int depthwise)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const int32_t groups = depthwise ? 1 : g->input_c / g->filter_c;
    const int32_t per_group = g->output_c / groups;
    for (int32_t b = 0; b < g->batches; ++b) {
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            for (int32_t ox = 0; ox < g->output_w; ++ox) {
                for (int32_t oc = 0; oc < g->output_c; ++oc) {
                    int32_t acc = bias != NULL ? bias[oc] : 0;
                    for (int32_t fy = 0; fy < g->filter_h; ++fy) {
                        for (int32_t fx = 0; fx < g->filter_w; ++fx) {
                            const int32_t y = oy * g->stride_h - g->pad_top + fy * g->dilation_h;
                            const int32_t x = ox * g->stride_w - g->pad_left + fx * g->dilation_w;
                            if (y < 0 || y >= g->input_h || x < 0 || x >= g->input_w) {
                                continue;
                            }
                            const int8_t *px =
                                in + (((size_t)b * g->input_h + y) * g->input_w + x) * g->input_c;
                            const size_t tap = (size_t)fy * g->filter_w + fx;
                            if (depthwise) {
                                const int32_t wv = w[tap * g->output_c + oc];
                                acc += wv * (px[oc / g->filter_c] + p->input_offset);
                                continue;
                            }
                            const int8_t *wp =
                                w + ((size_t)oc * g->filter_h * g->filter_w + tap) * g->filter_c;
                            const int8_t *xg = px + (oc / per_group) * g->filter_c;
                            for (int32_t ic = 0; ic < g->filter_c; ++ic) {
                                acc += wp[ic] * (xg[ic] + p->input_offset);
                            }
                        }
                    }
                    out[(((size_t)b * g->output_h + oy) * g->output_w + ox) * g->output_c + oc] =
                        (int8_t)rq_ref(acc, p->per_channel ? oc : 0, p);
                }
            }
        }
    }
}

/* CONV followed by MAX_POOL (the fused pool's definition), from conv_ref's output. */
static void pool_ref(const nnrt_conv_s8_params_t *p, const int8_t *conv, int8_t *out)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const nnrt_conv_pool_t *q = p->pool;
    for (int32_t b = 0; b < g->batches; ++b) {
        for (int32_t py = 0; py < q->output_h; ++py) {
            for (int32_t px = 0; px < q->output_w; ++px) {
                for (int32_t c = 0; c < g->output_c; ++c) {
                    int32_t m = -128;
                    for (int32_t fy = 0; fy < q->filter_h; ++fy) {
                        for (int32_t fx = 0; fx < q->filter_w; ++fx) {
                            const int32_t y = py * q->stride_h - q->pad_top + fy;
                            const int32_t x = px * q->stride_w - q->pad_left + fx;
                            if (y < 0 || y >= g->output_h || x < 0 || x >= g->output_w) {
                                continue;
                            }
                            const int32_t v = conv[(((size_t)b * g->output_h + y) * g->output_w + x)
                                                   * g->output_c + c];
                            m = v > m ? v : m;
                        }
                    }
                    out[(((size_t)b * q->output_h + py) * q->output_w + px) * g->output_c + c] =
                        (int8_t)nnrt_clamp_i32(m, q->act_min, q->act_max);
                }
            }
        }
    }
}

static void compare(const char *what, int32_t n_case, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (out_fast[i] != out_ref[i]) {
            if (fails < 20) {
                say(what, n_case, (int32_t)i);
            }
            ++fails;
            return;
        }
    }
    hash_bytes(out_fast, n);
}

/* ---- the families ---- */
enum { K_1X1, K_IM2COL, K_GENERIC, K_POOL, K_DW, K_DW3, K_DWBIG, K_DWIN };

static int rand_conv(nnrt_conv_s8_params_t *p, nnrt_conv_pool_t *pool, int kind)
{
    nnrt_conv_geom_t *g = &p->geom;
    memset(p, 0, sizeof(*p));
    g->batches = rint_(1, 2);
    g->input_h = rint_(1, 11);
    g->input_w = rint_(1, 11);
    g->input_c = rint_(1, 24);
    g->filter_h = kind == K_1X1 ? 1 : rint_(1, 5);
    g->filter_w = kind == K_1X1 ? 1 : rint_(1, 5);
    g->stride_h = rint_(1, 3);
    g->stride_w = rint_(1, 3);
    g->dilation_h = kind == K_1X1 ? 1 : rint_(1, 2);
    g->dilation_w = kind == K_1X1 ? 1 : rint_(1, 2);
    if (kind == K_DW3 || kind == K_DWIN) { /* the depthwise plane path: 3x3, undilated */
        g->input_h = rint_(1, 8);
        g->input_w = rint_(1, 70); /* lines past a strip of four planes too */
        g->input_c = (rnd() & 1u) ? 4 * rint_(1, 4) : rint_(1, 16);
        switch (rnd() % 8u) {
        case 0: /* tall and narrow: the plane runs along columns */
            g->input_h = rint_(9, 40);
            g->input_w = rint_(1, 6);
            break;
        case 1: /* one or two lines wider than a strip of one plane */
            g->input_h = rint_(1, 2);
            g->input_w = rint_(250, 560);
            g->input_c = rint_(1, 2);
            break;
        default:
            break;
        }
        g->filter_h = 3;
        g->filter_w = 3;
        g->dilation_h = 1;
        g->dilation_w = 1;
        g->filter_c = 1;
        if (kind == K_DW3 && rnd() % 4u == 0) { /* 1-8 output channels per input channel */
            g->filter_c = rint_(1, 8);
            g->input_c = rint_(1, 3);
        }
        g->output_c = g->input_c * g->filter_c;
    } else if (kind == K_DWBIG) { /* filters of more than 25 taps: the generic entry */
        g->input_h = rint_(1, 16);
        g->input_w = rint_(1, 16);
        g->filter_h = rint_(1, 12);
        g->filter_w = rint_(1, 12);
        g->dilation_h = (rnd() % 4u) == 0 ? 2 : 1;
        g->dilation_w = 1;
        static const int32_t mults[] = {1, 1, 2, 4, 8};
        g->filter_c = mults[rnd() % 5u];
        g->input_c = g->filter_c > 1 ? rint_(1, 3) : rint_(1, 9);
        g->output_c = g->input_c * g->filter_c;
    } else if (kind == K_DW) {
        static const int32_t mults[] = {1, 1, 1, 2, 3, 4, 8};
        g->filter_c = mults[rnd() % 7u];
        if (g->filter_c > 1) {
            g->input_c = rint_(1, 6);
        }
        g->output_c = g->input_c * g->filter_c;
    } else {
        g->filter_c = g->input_c;
        if (kind == K_GENERIC && (rnd() % 4u) == 0) { /* grouped */
            const int32_t groups = rint_(1, 3);
            g->filter_c = rint_(1, 6);
            g->input_c = g->filter_c * groups;
            g->output_c = groups * rint_(1, 4);
        } else {
            g->output_c = rint_(1, 24);
        }
    }
    if (kind == K_1X1) {
        g->output_h = (g->input_h - 1) / g->stride_h + 1;
        g->output_w = (g->input_w - 1) / g->stride_w + 1;
    } else if (!rand_axis(g->input_h, g->filter_h, g->stride_h, g->dilation_h, &g->output_h,
                          &g->pad_top)
               || !rand_axis(g->input_w, g->filter_w, g->stride_w, g->dilation_w, &g->output_w,
                             &g->pad_left)) {
        return 0;
    }
    if (kind == K_DWIN && (rnd() % 3u) == 0) {
        /* rows too long for all of a group's lines in the plane buffer (runs of rows
         * through the scratch ring), output rows wider than the input's: each overlays
         * input rows ahead of the one it reads */
        g->input_h = rint_(3, 12);
        g->input_w = rint_(16, 61);
        g->input_c = 4 * rint_(1, 2);
        g->output_c = g->input_c;
        g->stride_h = 1;
        g->stride_w = 1;
        g->pad_top = 0;
        g->output_h = g->input_h - 2;
        g->pad_left = 2;
        g->output_w = g->input_w + 2;
    }
    if (kind == K_DWIN
        && (int64_t)g->output_h * g->output_w > (int64_t)g->input_h * g->input_w) {
        return 0; /* the in-place kernel's contract */
    }
    p->input_offset = rint_(-127, 128);
    p->output_offset = rint_(-128, 127);
    rand_act(&p->act_min, &p->act_max);
    rand_quant(g->output_c, &p->per_channel);
    p->multiplier = mult_buf;
    p->shift = shift_buf;
    p->pool = NULL;
    if (kind == K_POOL) {
        memset(pool, 0, sizeof(*pool));
        pool->filter_h = rint_(1, 3);
        pool->filter_w = rint_(1, 3);
        pool->stride_h = pool->filter_h + rint_(0, 1);
        pool->stride_w = pool->filter_w + rint_(0, 1);
        pool->output_h = (g->output_h - 1) / pool->stride_h + 1;
        pool->output_w = (g->output_w - 1) / pool->stride_w + 1;
        rand_act(&pool->act_min, &pool->act_max);
        p->pool = pool;
    }
    const size_t in_n = (size_t)g->batches * g->input_h * g->input_w * g->input_c;
    const size_t w_n = kind >= K_DW ? (size_t)g->filter_h * g->filter_w * g->output_c
                                    : (size_t)g->output_c * g->filter_h * g->filter_w * g->filter_c;
    const size_t out_n = (size_t)g->batches * g->output_h * g->output_w * g->output_c;
    if (in_n > MAXB || w_n > MAXB || out_n > MAXB) {
        return 0;
    }
    rand_data(in_buf, in_n);
    rand_data(w_buf, w_n);
    return 1;
}

static void run_conv(int kind, int32_t n_case)
{
    nnrt_conv_s8_params_t p;
    nnrt_conv_pool_t pool;
    while (!rand_conv(&p, &pool, kind)) {
    }
    const nnrt_conv_geom_t *g = &p.geom;
    const int32_t *bias = (rnd() % 4u) == 0 ? NULL : bias_buf;
    size_t out_n = (size_t)g->batches * g->output_h * g->output_w * g->output_c;
    conv_ref(&p, in_buf, w_buf, bias, out_ref, kind >= K_DW);
    nnrt_status_t s;
    switch (kind) {
    case K_1X1:
        if (nnrt_conv2d_1x1_s8_get_buffer_size(&p) > sizeof(scratch_buf)) {
            return;
        }
        s = nnrt_conv2d_1x1_s8(&p, in_buf, w_buf, bias, out_fast, scratch_buf);
        break;
    case K_IM2COL:
        if (nnrt_conv2d_im2col_s8_get_buffer_size(&p) > sizeof(scratch_buf)) {
            return;
        }
        s = nnrt_conv2d_im2col_s8(&p, in_buf, w_buf, bias, out_fast, scratch_buf);
        break;
    case K_DW:
    case K_DW3:
    case K_DWBIG:
        s = (n_case & 1) && g->filter_h * g->filter_w <= 25
                ? nnrt_depthwise_conv2d_opt_s8(&p, in_buf, w_buf, bias, out_fast)
                : nnrt_depthwise_conv2d_s8(&p, in_buf, w_buf, bias, out_fast);
        break;
    case K_DWIN: {
        /* the in-place kernel: the input in the buffer, the output over it */
        const size_t in_n = (size_t)g->batches * g->input_h * g->input_w * g->input_c;
        if (nnrt_depthwise_conv2d_inplace_s8_get_buffer_size(g) > sizeof(scratch_buf)) {
            return;
        }
        memcpy(io_buf, in_buf, in_n);
        s = nnrt_depthwise_conv2d_inplace_s8(&p, io_buf, w_buf, bias, (int8_t *)scratch_buf);
        memcpy(out_fast, io_buf, out_n);
        break;
    }
    case K_POOL: {
        static int8_t conv_out[MAXB];
        memcpy(conv_out, out_ref, out_n);
        pool_ref(&p, conv_out, out_ref);
        out_n = (size_t)g->batches * pool.output_h * pool.output_w * g->output_c;
        s = nnrt_conv2d_s8(&p, in_buf, w_buf, bias, out_fast);
        break;
    }
    default: {
        /* one group: the matrix core runs with its columns in the output while they fit */
        const int32_t k = g->filter_h * g->filter_w * g->filter_c;
        const size_t need = (size_t)(16 * ((k + 3) / 4) + 4 * ((k + 3) / 4));
        if (g->filter_c == g->input_c && out_n >= 2 * (size_t)g->output_c + need + 3) {
            ++in_output;
        }
        s = nnrt_conv2d_s8(&p, in_buf, w_buf, bias, out_fast);
        break;
    }
    }
    if (s != NNRT_OK) {
        say("status", n_case, (int32_t)s);
        ++fails;
        return;
    }
    static const char *names[] = {"conv1x1", "im2col", "conv", "conv+pool", "depthwise",
                                  "depthwise3x3", "depthwise-big", "depthwise-inplace"};
    compare(names[kind], n_case, out_n);
}

static void run_fc(int32_t n_case)
{
    nnrt_fc_s8_params_t p;
    memset(&p, 0, sizeof(p));
    p.batches = rint_(1, 3);
    p.accum_depth = rint_(1, 300);
    p.output_depth = rint_(1, 20);
    p.input_offset = rint_(-127, 128);
    p.weights_offset = (rnd() % 5u) == 0 ? rint_(-127, 128) : 0;
    p.output_offset = rint_(-128, 127);
    rand_act(&p.act_min, &p.act_max);
    rand_quant(p.output_depth, &p.per_channel);
    if (p.weights_offset != 0) {
        p.per_channel = 0;
    }
    p.multiplier = mult_buf;
    p.shift = shift_buf;
    const int32_t *bias = (rnd() % 4u) == 0 ? NULL : bias_buf;
    /* small buffers (MAXB < 8192): shorter rows, no random draw (the same cases else) */
    {
        const int32_t rows = p.output_depth > p.batches ? p.output_depth : p.batches;
        if ((size_t)rows * (size_t)p.accum_depth > (size_t)MAXB) {
            p.accum_depth = (int32_t)(MAXB / rows);
        }
    }
    rand_data(in_buf, (size_t)p.batches * p.accum_depth);
    rand_data(w_buf, (size_t)p.output_depth * p.accum_depth);
    for (int32_t b = 0; b < p.batches; ++b) {
        for (int32_t o = 0; o < p.output_depth; ++o) {
            int32_t acc = bias != NULL ? bias[o] : 0;
            for (int32_t d = 0; d < p.accum_depth; ++d) {
                acc += (w_buf[(size_t)o * p.accum_depth + d] + p.weights_offset)
                       * (in_buf[(size_t)b * p.accum_depth + d] + p.input_offset);
            }
            const int32_t qi = p.per_channel ? o : 0;
            acc = nnrt_multiply_by_quantized_multiplier(acc, p.multiplier[qi], p.shift[qi]);
            acc = (int32_t)((uint32_t)acc + (uint32_t)p.output_offset);
            out_ref[(size_t)b * p.output_depth + o] =
                (int8_t)nnrt_clamp_i32(acc, p.act_min, p.act_max);
        }
    }
    if (nnrt_fully_connected_s8(&p, in_buf, w_buf, bias, out_fast) != NNRT_OK) {
        say("fc status", n_case, 0);
        ++fails;
        return;
    }
    compare("fc", n_case, (size_t)p.batches * p.output_depth);
}

/* The folded requantisation against TFLM's two steps. */
static void run_requant(void)
{
    static const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, 1 << 30, -(1 << 30), INT32_MAX,
                                    INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, 65535, -65536};
    const int32_t n_edges = (int32_t)(sizeof(edges) / sizeof(edges[0]));
    for (int32_t i = 0; i < 20000; ++i) {
        const int32_t acc = i < n_edges * 8 ? edges[i % n_edges]
                                            : (i & 1) ? (int32_t)rnd() : rint_(-70000, 70000);
        const int32_t m = (i / n_edges) % 4 == 0 ? (1 << 30)
                          : (i / n_edges) % 4 == 1 ? INT32_MAX
                                                   : (int32_t)((1u << 30) + (rnd() % (1u << 30)));
        const int32_t shift = rint_(-31, 30);
        const int32_t off = rint_(-128, 127);
        nnrt_rqf_t q;
        nnrt_rqf_init(&q, m, shift);
        const int32_t got = nnrt_rqf(acc, &q, off);
        const int32_t want = (int32_t)((uint32_t)nnrt_multiply_by_quantized_multiplier(
                                           acc, m, shift) + (uint32_t)off);
        if (got != want) {
            if (fails < 20) {
                say("requant acc/shift", acc, shift);
            }
            ++fails;
        }
        /* any shift <= 0 (element-wise ADD/SUB's three requantisations) */
        const int32_t e = shift <= 0 ? -shift : rint_(0, 3);
        const int32_t want_np = nnrt_multiply_by_quantized_multiplier(acc, m, -e);
        if (nnrt_rq_nonpos(acc, m, e) != want_np) {
            if (fails < 20) {
                say("requant-nonpos acc/shift", acc, -e);
            }
            ++fails;
        }
    }
}

/*
 * Extreme sums, not drawn at random: deep 1x1 and im2col convolutions whose inputs and
 * weights all sit at the ends of their ranges (x + input_offset = +-255, weights -128 or
 * 127), so that every partial sum is as large as the arithmetic allows. The packed
 * columns of the cores without SMLAD (internal/gemm.h: two pixels per SMLAL, pixel 0's
 * sum split off every 128 positions) are exact only within that bound. Not hashed (the
 * random cases' hash stays comparable); mismatches count.
 */
static int32_t extremes;
static void run_extremes(void)
{
    static const int8_t xs[][2] = {{-128, -128}, {127, 127}, {-128, 127}, {127, -128}};
    static const int32_t offs[] = {-127, 128};
    static const int32_t depths[] = {128, 129, 389};
    for (size_t di = 0; di < sizeof(depths) / sizeof(depths[0]); ++di) {
        for (size_t oi = 0; oi < 2; ++oi) {
            for (int32_t xwi = 0; xwi < 24; ++xwi) {
                const int32_t xi = xwi % 4;      /* the inputs of the pixels */
                const int32_t wi = xwi / 4 % 3;  /* the weights */
                const int im2col = xwi / 12;     /* 1x1, or 1x3 through im2col */
                nnrt_conv_s8_params_t p;
                memset(&p, 0, sizeof(p));
                nnrt_conv_geom_t *g = &p.geom;
                const int32_t fw = im2col ? 3 : 1;
                g->batches = 1;
                g->input_h = 1;
                g->input_w = 2 + fw; /* three output pixels: a pair and a lone one */
                g->input_c = depths[di];
                g->filter_h = 1;
                g->filter_w = fw;
                g->stride_h = 1;
                g->stride_w = 1;
                g->dilation_h = 1;
                g->dilation_w = 1;
                g->filter_c = g->input_c;
                g->output_c = 2;
                g->output_h = 1;
                g->output_w = 3;
                const int32_t c = g->input_c;
                const int32_t k = fw * c;
                if ((size_t)g->input_w * (size_t)c > MAXB || (size_t)2 * (size_t)k > MAXB) {
                    continue;
                }
                for (int32_t px = 0; px < g->input_w; ++px) {
                    memset(in_buf + (size_t)px * (size_t)c, xs[xi][px & 1], (size_t)c);
                }
                for (int32_t i = 0; i < 2 * k; ++i) {
                    /* all -128, all 127, or the sign following the channel */
                    w_buf[i] = (int8_t)(wi == 0 ? -128 : wi == 1 ? 127
                                                           : (i < k ? -128 : 127));
                }
                mult_buf[0] = 1 << 30;
                shift_buf[0] = -19; /* 1167 * 32640 / 2^20 fits int8 */
                p.input_offset = offs[oi];
                p.output_offset = 0;
                p.act_min = -128;
                p.act_max = 127;
                p.per_channel = 0;
                p.multiplier = mult_buf;
                p.shift = shift_buf;
                const size_t out_n = 6;
                conv_ref(&p, in_buf, w_buf, NULL, out_ref, 0);
                nnrt_status_t s;
                if (im2col) {
                    if (nnrt_conv2d_im2col_s8_get_buffer_size(&p) > sizeof(scratch_buf)) {
                        continue;
                    }
                    s = nnrt_conv2d_im2col_s8(&p, in_buf, w_buf, NULL, out_fast,
                                              scratch_buf);
                } else {
                    if (nnrt_conv2d_1x1_s8_get_buffer_size(&p) > sizeof(scratch_buf)) {
                        continue;
                    }
                    s = nnrt_conv2d_1x1_s8(&p, in_buf, w_buf, NULL, out_fast, scratch_buf);
                }
                const int32_t n_case = (int32_t)(100 * di + 50 * oi + xwi);
                ++extremes;
                if (s != NNRT_OK) {
                    say("extremes-status", n_case, (int32_t)s);
                    ++fails;
                    continue;
                }
                for (size_t i = 0; i < out_n; ++i) {
                    if (out_fast[i] != out_ref[i]) {
                        if (fails < 20) {
                            say("extremes", n_case, (int32_t)i);
                        }
                        ++fails;
                        break;
                    }
                }
            }
        }
    }
}

/*
 * Depthwise 3x3 shapes the random draw rarely makes: long interior columns (the no-DSP
 * path runs them along columns, with the side columns of 2 filter columns), long rows,
 * strides 1 and 2 either way, SAME and VALID padding. Random data and requantisation;
 * not hashed, mismatches count.
 */
static int32_t dw_shapes;
static void run_dw_shapes(void)
{
    static const int8_t shapes[][6] = {
        /* input_h, input_w, input_c, stride_h, stride_w, same */
        {25, 5, 4, 1, 1, 1}, {25, 5, 3, 1, 1, 0}, {30, 6, 2, 2, 1, 1}, {31, 7, 2, 2, 2, 1},
        {7, 40, 3, 1, 1, 1}, {8, 41, 2, 1, 2, 1}, {16, 16, 4, 1, 1, 1}, {12, 12, 5, 2, 2, 1},
        {40, 3, 4, 1, 1, 1}, {9, 9, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); ++i) {
        nnrt_conv_s8_params_t p;
        memset(&p, 0, sizeof(p));
        nnrt_conv_geom_t *g = &p.geom;
        g->batches = 1;
        g->input_h = shapes[i][0];
        g->input_w = shapes[i][1];
        g->input_c = shapes[i][2];
        g->stride_h = shapes[i][3];
        g->stride_w = shapes[i][4];
        g->filter_h = 3;
        g->filter_w = 3;
        g->dilation_h = 1;
        g->dilation_w = 1;
        g->filter_c = 1;
        g->output_c = g->input_c;
        if (shapes[i][5]) { /* SAME: pad the total of (out - 1) * stride + 3 - in, half first */
            g->output_h = (g->input_h + g->stride_h - 1) / g->stride_h;
            g->output_w = (g->input_w + g->stride_w - 1) / g->stride_w;
            const int32_t th = (g->output_h - 1) * g->stride_h + 3 - g->input_h;
            const int32_t tw = (g->output_w - 1) * g->stride_w + 3 - g->input_w;
            g->pad_top = th > 0 ? th / 2 : 0;
            g->pad_left = tw > 0 ? tw / 2 : 0;
        } else {
            g->output_h = (g->input_h - 3) / g->stride_h + 1;
            g->output_w = (g->input_w - 3) / g->stride_w + 1;
            g->pad_top = 0;
            g->pad_left = 0;
        }
        const size_t in_n = (size_t)g->input_h * g->input_w * g->input_c;
        const size_t out_n = (size_t)g->output_h * g->output_w * g->output_c;
        if (in_n > MAXB || out_n > MAXB) {
            continue;
        }
        rand_data(in_buf, in_n);
        rand_data(w_buf, (size_t)9 * g->output_c);
        rand_act(&p.act_min, &p.act_max);
        rand_quant(g->output_c, &p.per_channel);
        p.input_offset = rint_(-127, 128);
        p.output_offset = rint_(-128, 127);
        p.multiplier = mult_buf;
        p.shift = shift_buf;
        conv_ref(&p, in_buf, w_buf, bias_buf, out_ref, 1);
        const nnrt_status_t st = nnrt_depthwise_conv2d_s8(&p, in_buf, w_buf, bias_buf, out_fast);
        ++dw_shapes;
        if (st != NNRT_OK) {
            say("dw-shapes-status", (int32_t)i, (int32_t)st);
            ++fails;
            continue;
        }
        for (size_t j = 0; j < out_n; ++j) {
            if (out_fast[j] != out_ref[j]) {
                if (fails < 20) {
                    say("dw-shapes", (int32_t)i, (int32_t)j);
                }
                ++fails;
                break;
            }
        }
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    run_requant();
    for (int32_t i = 0; i < NCASES; ++i) {
        for (int kind = K_1X1; kind <= K_DWIN; ++kind) {
            run_conv(kind, i);
        }
        run_fc(i);
    }
    run_extremes();
    run_dw_shapes();
    say("gemm-in-output", in_output, 0);
    say("extremes", extremes, 0);
    say("dw-shapes", dw_shapes, 0);
    say("fails", fails, 0);
    say("hash", (int32_t)(hash >> 16), (int32_t)(hash & 0xFFFFu));
    return fails == 0 ? 0 : 1;
}
