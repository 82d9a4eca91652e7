/*
 * Fast int8 depthwise convolution (no fused pool, KH * KW <= NNRT_DW_MAX_TAPS), the
 * arithmetic of TFLM's reference DepthwiseConvPerChannel (taps outside the input
 * skipped, exact int32 sums), requantised once per output (internal/requant.h).
 *
 * Output channels are the outer loop, so that everything per channel is prepared once
 * per call. DSP cores, 3x3 undilated with stride_w 1 or 2 (any depth multiplier): the
 * plane path of internal/dw_plane.h (input lines converted once into int16 planes, two
 * neighbouring outputs sharing their loads through SMLAD, in assembly). Other shapes on
 * DSP cores, depth multiplier 1: groups of four channels, their weights of every tap
 * sign-extended once into the int16 pairs [w0 w2] [w1 w3] (8 * KH * KW bytes of
 * stack), the requantisation constants and the biases; then every output pixel: per
 * tap one word of inputs, SXTAB16 adding the input offset to two at a time, four
 * SMLABB / SMLATT. Runs of pixels whose window lies inside the input use the tap
 * offsets of the whole window (3x3 undilated windows fully unrolled); border pixels a
 * list of the taps inside. Remaining channels (C % 4), other multipliers and cores
 * without the DSP extension: one channel at a time in portable C, in the same order
 * (3x3 undilated runs unrolled, the input offset folded into the start value). Without
 * the DSP extension the border pixels then come last, all channels of one pixel
 * together, so that the list of the taps inside is built once per pixel.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conv_check.h"
#include "dw.h"
#include "dw_plane.h"
#include "mve_dw.h"
#include "requant.h"
#include "rv32_dw.h"
#include "simd.h"
#include "window.h"

/* The taps of the window at (y0, x0) that lie inside the input: byte offsets from the
 * batch's first input of the channel (off[]) and tap numbers (tap[]); returns how many. */
static int32_t clip_taps(const nnrt_conv_geom_t *g, int32_t y0, int32_t x0,
                         int32_t off[NNRT_DW_MAX_TAPS], uint8_t tap[NNRT_DW_MAX_TAPS])
{
    const int32_t fy_s = first_inside(y0, g->dilation_h);
    const int32_t fy_e = end_inside(y0, g->dilation_h, g->input_h, g->filter_h);
    const int32_t fx_s = first_inside(x0, g->dilation_w);
    const int32_t fx_e = end_inside(x0, g->dilation_w, g->input_w, g->filter_w);
    const int32_t x_step = g->dilation_w * g->input_c;
    const int32_t y_step = g->dilation_h * g->input_w * g->input_c;
    int32_t row = ((y0 + fy_s * g->dilation_h) * g->input_w + x0 + fx_s * g->dilation_w)
                  * g->input_c;
    int32_t n = 0;
    for (int32_t fy = fy_s; fy < fy_e; ++fy, row += y_step) {
        int32_t o = row;
        for (int32_t fx = fx_s; fx < fx_e; ++fx, ++n, o += x_step) {
            off[n] = o;
            tap[n] = (uint8_t)(fy * g->filter_w + fx);
        }
    }
    return n;
}

/* Output columns [lo, hi) whose windows lie inside the input's width (lo == hi: none). */
static void inside_columns(const nnrt_conv_geom_t *g, int32_t *lo, int32_t *hi)
{
    const int32_t span = (g->filter_w - 1) * g->dilation_w;
    const int32_t last = g->input_w - 1 - span + g->pad_left; /* largest ox * stride_w */
    *lo = (g->pad_left + g->stride_w - 1) / g->stride_w;
    *hi = last < 0 ? 0 : last / g->stride_w + 1;
    *hi = *hi < g->output_w ? *hi : g->output_w;
    *hi = *hi > *lo ? *hi : *lo;
}

/* Everything a run of output pixels of one channel group needs. */
typedef struct {
    const nnrt_conv_geom_t *g;
    const int32_t *toff;    /* byte offsets of all taps from the window origin */
    const uint8_t *ident;   /* 0, 1, ... taps - 1 */
    const int32_t *b0;      /* biases of the group (4, or 1 for one channel) */
    const nnrt_rqf_t *q;    /* their requantisation */
    const void *w;          /* weights: extended pairs (DSP group) or int32 (one channel) */
    size_t x_step;          /* bytes between the windows of neighbouring output pixels */
    size_t oc_n;            /* output channels: the output pixel step */
    int32_t taps;
    int32_t in_off;
    int32_t out_off;
    int32_t lo;
    int32_t hi;
    int32_t fast;           /* DSP group: every channel in the fast form */
    int32_t full;           /* DSP group: the activation range is all of int8 */
    int32_t sl;             /* no-DSP Thumb-2: the side columns of pk_sides(), or -1 */
    int32_t sr;
} run_t;

/* One channel: n pixels from base, taps off[0..nt) with weights w[tap[i]]. */
static NNRT_COLD NNRT_NOINLINE void run1(const run_t *k, const int8_t *base, int8_t *out, int32_t n,
                               const int32_t *off, const uint8_t *tap, int32_t nt)
{
    const int32_t *w = (const int32_t *)k->w;
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t acc = k->b0[0];
        for (int32_t t = 0; t < nt; ++t) {
            acc += w[tap[t]] * ((int32_t)base[off[t]] + k->in_off);
        }
        *out = nnrt_act8(nnrt_rqf(acc, k->q, k->out_off), k->lo, k->hi);
    }
}

#if !NNRT_DSP
/* n pixels of one channel from base: 3x3 undilated window inside the input. The input
 * offset is folded into the start value (b + in_off * sum(w), exact in wrapping uint32
 * arithmetic like the per-tap sum), so each tap is one load and one multiply-add; the
 * nine weights stay in registers. fast: the channel's requantisation is in the fast
 * form (a constant at the call: the loop is instantiated twice). */
static NNRT_ALWAYS_INLINE void run1_3x3_body(const run_t *k, const int8_t *base, int8_t *out,
                                             int32_t n, int32_t rows, int fast)
{
    const int32_t *w = (const int32_t *)k->w;
    const uint32_t w0 = (uint32_t)w[0], w1 = (uint32_t)w[1], w2 = (uint32_t)w[2];
    const uint32_t w3 = (uint32_t)w[3], w4 = (uint32_t)w[4], w5 = (uint32_t)w[5];
    const uint32_t w6 = (uint32_t)w[6], w7 = (uint32_t)w[7], w8 = (uint32_t)w[8];
    const uint32_t start = (uint32_t)k->b0[0]
                           + (uint32_t)k->in_off * (w0 + w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8);
    const size_t c = (size_t)k->g->input_c;
    const size_t rs = (size_t)k->g->input_w * c;
    const nnrt_rqf_t *q = k->q;
    const int32_t mult = q->mult;
    const int32_t half = q->half;
    const int32_t rsh = q->rsh;
    const int32_t out_off = k->out_off;
    const int32_t lo = k->lo;
    const int32_t hi = k->hi;
    const size_t x_step = k->x_step;
    const size_t oc_n = k->oc_n;
    /* From the end of one row's run to the start of the next (may be negative). */
    const ptrdiff_t in_rs = (ptrdiff_t)k->g->stride_h * (ptrdiff_t)rs
                            - (ptrdiff_t)n * (ptrdiff_t)x_step;
    const ptrdiff_t out_rs = (ptrdiff_t)(k->g->output_w - n) * (ptrdiff_t)oc_n;
    for (int32_t y = 0; y < rows; ++y, base += in_rs, out += out_rs) {
        for (int32_t i = 0; i < n; ++i, base += x_step, out += oc_n) {
            const int8_t *r = base;
            uint32_t acc = start + w0 * (uint32_t)(int32_t)r[0] + w1 * (uint32_t)(int32_t)r[c]
                           + w2 * (uint32_t)(int32_t)r[2 * c];
            r += rs;
            acc += w3 * (uint32_t)(int32_t)r[0] + w4 * (uint32_t)(int32_t)r[c]
                   + w5 * (uint32_t)(int32_t)r[2 * c];
            r += rs;
            acc += w6 * (uint32_t)(int32_t)r[0] + w7 * (uint32_t)(int32_t)r[c]
                   + w8 * (uint32_t)(int32_t)r[2 * c];
            int32_t v = fast ? nnrt_rqf_fast((int32_t)acc, mult, half, rsh) + out_off
                             : nnrt_rq_ref((int32_t)acc, mult, q->shift, out_off);
            /* [lo, hi] lies within [-128, 127]: clamping to it alone equals nnrt_act8(). */
            v = v < lo ? lo : v;
            v = v > hi ? hi : v;
            *out = (int8_t)v;
        }
    }
}

#if defined(__thumb2__) && defined(__OPTIMIZE__) && !defined(NNRT_PORTABLE_ONLY)
/*
 * Thumb-2 without the DSP extension (Cortex-M3, the AN521's M33): two neighbouring
 * outputs of a line in one 64-bit SMLAL sum. With stride s, outputs o and o + 1 of a
 * filter line read the inputs x_0 .. x_{2+s} of the line; input j carries the packed
 * weight P_j = w_j + w_{j-s} * 2^23 (each part 0 where its tap does not exist), so that
 *
 *   sum_j x_j * P_j = out_o + out_{o+1} * 2^23
 *
 * (raw inputs: the offset is in the start value). |out_o| <= 9 * 128 * 128 < 2^22, so
 * with the sum started at 2^22 its low 23 bits are out_o + 2^22 and the rest, shifted
 * down, out_{o+1}, both exact. Per filter line 3 + s loads and SMLALs for 6 MACs
 * (scalar: 12); the sums of a run go to the stack, then one requantisation loop.
 */
#define NNRT_DW_PK 1
/* Outputs per call of the assembly (their sums on the stack: 4 bytes each). */
#define NNRT_DW_PK_MAX 64
/* The shortest line the assembly takes (fewer outputs: the scalar loops). */
#define NNRT_DW_PK_MIN 6

/* The first three taps of a filter line: inputs q, q + c, q + 2c. */
#define NNRT_DW_PK_TAPS3                                                                      \
    "ldm %[pw]!, {%[pa], %[pb], %[pc]}\n\t"                                                 \
    "ldrsb %[x], [%[q]]\n\t"                                                                \
    "smlal %[lo], %[hi], %[x], %[pa]\n\t"                                                   \
    "ldrsb %[x], [%[q], %[c]]\n\t"                                                          \
    "smlal %[lo], %[hi], %[x], %[pb]\n\t"                                                   \
    "ldrsb %[x], [%[q], %[c], lsl #1]\n\t"                                                  \
    "smlal %[lo], %[hi], %[x], %[pc]\n\t"

/* The filter line loads: row 0 .. 2 of pk_sums(), s = 1 (inputs q, q + c .. q + 3c). */
#define NNRT_DW_PK_ROW1                                                                       \
    NNRT_DW_PK_TAPS3                                                                          \
    "ldr %[pa], [%[pw]], #4\n\t"                                                            \
    "add %[q], %[q], %[c]\n\t"                                                              \
    "ldrsb %[x], [%[q], %[c], lsl #1]\n\t"                                                  \
    "smlal %[lo], %[hi], %[x], %[pa]\n\t"                                                   \
    "add %[q], %[q], %[rsm]\n\t"
/* s = 2: inputs q .. q + 4c */
#define NNRT_DW_PK_ROW2                                                                       \
    NNRT_DW_PK_TAPS3                                                                          \
    "ldm %[pw]!, {%[pa], %[pb]}\n\t"                                                        \
    "add %[q], %[q], %[c], lsl #1\n\t"                                                      \
    "ldrsb %[x], [%[q], %[c]]\n\t"                                                          \
    "smlal %[lo], %[hi], %[x], %[pa]\n\t"                                                   \
    "ldrsb %[x], [%[q], %[c], lsl #1]\n\t"                                                  \
    "smlal %[lo], %[hi], %[x], %[pb]\n\t"                                                   \
    "add %[q], %[q], %[rsm]\n\t"

/*
 * The sums of `pairs` output pairs along one line from p (the first window's first
 * input), stride s (1 or 2), nl filter lines (2 or 3) of packed weights pw (3 + s words
 * each), ts the bytes between neighbouring taps of a filter line (the input depth along
 * a row, the row stride along a column), ls the bytes between filter lines:
 * out[2i] = the first output's sum + 2^22 in its low 23 bits, out[2i + 1] = the
 * second output's sum.
 */
static NNRT_ALWAYS_INLINE void pk_sums(const uint32_t *pw, const int8_t *p, int32_t ts,
                                       int32_t ls, int32_t pairs, int32_t *out, int s, int nl)
{
    /* pinned in ascending order: the LDM register lists */
    register uint32_t pa __asm__("r8");
    register uint32_t pb __asm__("r9");
    register uint32_t pc __asm__("r10");
    const int8_t *end = p + (size_t)pairs * (size_t)(2 * s) * (size_t)ts;
    const int32_t rsm = ls - s * ts; /* from where a line's loads leave q to the next */
    const int8_t *q;
    uint32_t lo;
    uint32_t hi;
    int32_t x;
    __asm__ volatile("1:\n\t"
                     "mov %[q], %[p]\n\t"
                     "mov %[lo], #0x400000\n\t"
                     "mov %[hi], #0\n\t"
                     ".rept %c[nl]\n\t"
                     ".if %c[s] == 1\n\t"
                     NNRT_DW_PK_ROW1
                     ".else\n\t"
                     NNRT_DW_PK_ROW2
                     ".endif\n\t"
                     ".endr\n\t"
                     "sub %[pw], %[pw], #%c[back]\n\t"
                     "ubfx %[x], %[lo], #0, #23\n\t"
                     "lsr %[lo], %[lo], #23\n\t"
                     "orr %[lo], %[lo], %[hi], lsl #9\n\t"
                     "strd %[x], %[lo], [%[o]], #8\n\t"
                     "add %[p], %[p], %[c], lsl #%c[s]\n\t"
                     "cmp %[p], %[end]\n\t"
                     "bne 1b\n\t"
                     : [pa] "=&r"(pa), [pb] "=&r"(pb), [pc] "=&r"(pc), [q] "=&r"(q),
                       [lo] "=&r"(lo), [hi] "=&r"(hi), [x] "=&r"(x), [p] "+r"(p),
                       [pw] "+r"(pw), [o] "+r"(out)
                     : [c] "r"(ts), [rsm] "r"(rsm), [end] "r"(end), [s] "i"(s), [nl] "i"(nl),
                       [back] "i"(4 * nl * (3 + s))
                     : "cc", "memory");
}
#undef NNRT_DW_PK_ROW1
#undef NNRT_DW_PK_ROW2
#undef NNRT_DW_PK_TAPS3

/* pk_sums() for stride s (1 or 2) and nl (2 or 3) lines: one instance each, the rest
 * of pk_run() shared (ROM). */
static NNRT_NOINLINE void pk_sums_any(const uint32_t *pw, const int8_t *p, int32_t ts,
                                      int32_t ls, int32_t pairs, int32_t *out, int s, int nl)
{
    if (nl == 3) {
        if (s == 1) {
            pk_sums(pw, p, ts, ls, pairs, out, 1, 3);
        } else {
            pk_sums(pw, p, ts, ls, pairs, out, 2, 3);
        }
    } else if (s == 1) {
        pk_sums(pw, p, ts, ls, pairs, out, 1, 2);
    } else {
        pk_sums(pw, p, ts, ls, pairs, out, 2, 2);
    }
}

/*
 * The outputs of `pairs` pairs of sums from pk_sums() (start values st0 / st1 added):
 * requantised by the folded form of requant.h (nnrt_rq_fold(): multiplier m, addend ad
 * with the output offset in it, shift rs >= 2), SSAT, stored at o and o + ocn, ...: 19
 * instructions a pair. Only for the activation range all of int8 (no clamps).
 */
static NNRT_ALWAYS_INLINE void pk_store(const int32_t *sums, int32_t pairs, uint32_t st0,
                                        uint32_t st1, int32_t m, int32_t ad, int32_t rs,
                                        int8_t *o, size_t ocn)
{
    const int32_t *end = sums + 2 * pairs;
    const uint32_t q30 = 0x40000000u;
    int32_t a;
    int32_t lo;
    int32_t hi;
#define NNRT_DW_PK_OUT(st, store)                                                             \
    "ldr %[a], [%[s]], #4\n\t"                                                              \
    "add %[a], %[a], " st "\n\t"                                                            \
    "add %[hi], %[ad], %[a], asr #31\n\t"                                                   \
    "eor %[lo], %[q30], %[hi], lsl #31\n\t"                                                 \
    "smlal %[lo], %[hi], %[a], %[m]\n\t"                                                    \
    "asr %[hi], %[hi], %[rs]\n\t"                                                           \
    "ssat %[hi], #8, %[hi]\n\t" store "\n\t"
    __asm__ volatile("1:\n\t"
                     NNRT_DW_PK_OUT("%[st0]", "strb %[hi], [%[o]]")
                     NNRT_DW_PK_OUT("%[st1]", "strb %[hi], [%[o], %[ocn]]")
                     "add %[o], %[o], %[ocn], lsl #1\n\t"
                     "cmp %[s], %[end]\n\t"
                     "bne 1b\n\t"
                     : [s] "+r"(sums), [o] "+r"(o), [a] "=&r"(a), [lo] "=&r"(lo),
                       [hi] "=&r"(hi)
                     : [end] "r"(end), [st0] "r"(st0), [st1] "r"(st1), [m] "r"(m),
                       [ad] "r"(ad), [rs] "r"(rs), [q30] "r"(q30), [ocn] "r"(ocn)
                     : "cc", "memory");
#undef NNRT_DW_PK_OUT
}

/*
 * The packed weights of nl filter lines from line fl0 on (pk_sums(): 3 + s words a
 * line) from a channel's 3x3 weights w (row-major): lines along rows (vert 0: line l is
 * filter row fl0 + l, its taps the columns) or along columns (vert 1: filter column
 * fl0 + l, its taps the rows). Returns the sum of the weights of those lines.
 */
static NNRT_ALWAYS_INLINE uint32_t pk_weights(uint32_t *pw, const int32_t *w, int s, int nl,
                                              int fl0, int vert)
{
    uint32_t sum = 0;
    for (int l = 0; l < nl; ++l) {
        const int f = fl0 + l;
        for (int j = 0; j < 3 + s; ++j) {
            const int jb = j - s;
            const uint32_t a = j <= 2 ? (uint32_t)w[vert ? 3 * j + f : 3 * f + j] : 0u;
            const uint32_t b = jb >= 0 && jb <= 2 ? (uint32_t)w[vert ? 3 * jb + f : 3 * f + jb]
                                                  : 0u;
            pw[l * (3 + s) + j] = a + (b << 23);
        }
        for (int j = 0; j < 3; ++j) {
            sum += (uint32_t)w[vert ? 3 * j + f : 3 * f + j];
        }
    }
    return sum;
}

/* Where pk_run() reads and writes: n outputs a line (input step in_step, output step
 * o_step), nlo lines (the next from base + in_next, out + o_next). */
typedef struct {
    int32_t n;
    int32_t nlo;
    int32_t ts;      /* pk_sums() */
    int32_t ls;
    size_t in_step;
    size_t o_step;
    size_t in_next;
    size_t o_next;
    const int32_t *off; /* an odd last output: run1() with these taps; NULL: 3x3 */
    const uint8_t *tap;
    int32_t nt;
} pk_walk_t;

/* A channel along lines of stride s with nl filter lines (packed
 * weights pw, their sum sumw): the pairs of each line through pk_sums(), then
 * pk_store() (or C where the activation range is narrower than int8 or the folded form
 * does not apply), an odd last output through run1_3x3_body() or run1(). */
static NNRT_NOINLINE void pk_run(const run_t *k, const uint32_t *pw, uint32_t sumw,
                                 const int8_t *base, int8_t *out, const pk_walk_t *wk, int s,
                                 int nl)
{
    const uint32_t start = (uint32_t)k->b0[0] + (uint32_t)k->in_off * sumw;
    const uint32_t start0 = start - (1u << 22);
    const nnrt_rqf_t *q = k->q;
    const int32_t mult = q->mult;
    const int32_t rsh = q->rsh;
    const int32_t out_off = k->out_off;
    const int32_t lo = k->lo;
    const int32_t hi = k->hi;
    const size_t o_step = wk->o_step;
    /* nnrt_rq_fold()'s form: the fast form with rsh >= 2 (an even addend),
     * |addend| <= 2^30; other channels requantise in C (any shift) */
    const int64_t addend = (int64_t)q->half + (int64_t)out_off * ((int64_t)1 << rsh);
    const int fold = q->fast && k->full && rsh >= 2 && addend >= -(1 << 30)
                     && addend <= (1 << 30);
    int32_t sums[NNRT_DW_PK_MAX];
    for (int32_t y = 0; y < wk->nlo; ++y, base += wk->in_next, out += wk->o_next) {
        const int8_t *b = base;
        int8_t *o = out;
        int32_t left = wk->n;
        while (left >= 2) {
            const int32_t m = left < NNRT_DW_PK_MAX ? left & ~1 : NNRT_DW_PK_MAX;
            pk_sums_any(pw, b, wk->ts, wk->ls, m >> 1, sums, s, nl);
            if (fold) {
                pk_store(sums, m >> 1, start0, start, mult, (int32_t)addend, rsh, o, o_step);
                o += (size_t)m * o_step;
            }
            for (int32_t i = 0; !fold && i < m; i += 2, o += 2 * o_step) {
                const uint32_t a0 = start0 + (uint32_t)sums[i];
                const uint32_t a1 = start + (uint32_t)sums[i + 1];
                o[0] = nnrt_act8(nnrt_rqf_nonpos((int32_t)a0, q, out_off), lo, hi);
                o[o_step] = nnrt_act8(nnrt_rqf_nonpos((int32_t)a1, q, out_off), lo, hi);
            }
            b += (size_t)m * wk->in_step;
            left -= m;
        }
        if (left != 0) {
            if (wk->off != NULL) {
                run1(k, b, o, 1, wk->off, wk->tap, wk->nt);
            } else if (q->fast) {
                run1_3x3_body(k, b, o, 1, 1, 1);
            } else {
                run1_3x3_body(k, b, o, 1, 1, 0);
            }
        }
    }
}

/*
 * The interior run of run1_3x3() (n outputs a row, rows rows): along rows or, where the run is taller than wide, along columns (fewer odd
 * last outputs), through pk_run(). Returns 0 (nothing done) where neither direction
 * has a stride of at most 2 and NNRT_DW_PK_MIN outputs.
 */
static int run1_3x3_pk(const run_t *k, const int8_t *base, int8_t *out, int32_t n,
                       int32_t rows)
{
    const nnrt_conv_geom_t *g = k->g;
    const int32_t c = g->input_c;
    const int32_t rs = g->input_w * c;
    /* lines of NNRT_DW_PK_MIN outputs or more: shorter ones do not repay the calls */
    const int vert_ok = g->stride_h <= 2 && rows >= NNRT_DW_PK_MIN;
    const int horiz_ok = g->stride_w <= 2 && n >= NNRT_DW_PK_MIN;
    const int vert = vert_ok && (!horiz_ok || rows > n);
    if (!vert && !horiz_ok) {
        return 0;
    }
    uint32_t pw[15];
    pk_walk_t wk;
    const int s = vert ? g->stride_h : g->stride_w;
    const int32_t *w = (const int32_t *)k->w;
    uint32_t sumw;
    if (s == 1) {
        sumw = vert ? pk_weights(pw, w, 1, 3, 0, 1) : pk_weights(pw, w, 1, 3, 0, 0);
    } else {
        sumw = vert ? pk_weights(pw, w, 2, 3, 0, 1) : pk_weights(pw, w, 2, 3, 0, 0);
    }
    wk.off = NULL;
    wk.tap = NULL;
    wk.nt = 0;
    if (vert) {
        wk.n = rows;
        wk.nlo = n;
        wk.ts = rs;
        wk.ls = c;
        wk.in_step = (size_t)g->stride_h * (size_t)rs;
        wk.o_step = (size_t)g->output_w * k->oc_n;
        wk.in_next = k->x_step;
        wk.o_next = k->oc_n;
    } else {
        wk.n = n;
        wk.nlo = rows;
        wk.ts = c;
        wk.ls = rs;
        wk.in_step = k->x_step;
        wk.o_step = k->oc_n;
        wk.in_next = (size_t)g->stride_h * (size_t)rs;
        wk.o_next = (size_t)g->output_w * k->oc_n;
    }
    pk_run(k, pw, sumw, base, out, &wk, s, 3);
    return 1;
}

/*
 * The border columns of the interior rows whose window loses only its first (left) or
 * last (right) filter column: output columns *l and *r (-1: none), taken by channel1()
 * (pk_side()) instead of borders(). 3x3 undilated filters, stride_h <= 2.
 */
static void pk_sides(const nnrt_conv_geom_t *g, int32_t lo, int32_t hi, int32_t *l, int32_t *r)
{
    *l = -1;
    *r = -1;
    /* the interior rows (window inside the input's height): one run of NNRT_DW_PK_MIN */
    const int32_t oy0 = (g->pad_top + g->stride_h - 1) / g->stride_h;
    const int32_t last = g->input_h - 3 + g->pad_top; /* largest oy * stride_h */
    const int32_t oy1 = last < 0 ? 0 : last / g->stride_h + 1;
    if (g->filter_h != 3 || g->filter_w != 3 || g->dilation_h != 1 || g->dilation_w != 1
        || g->stride_h > 2 || lo >= hi || g->input_w < 2
        || (oy1 < g->output_h ? oy1 : g->output_h) - oy0 < NNRT_DW_PK_MIN) {
        return;
    }
    if (lo >= 1 && (lo - 1) * g->stride_w - g->pad_left == -1) {
        *l = lo - 1;
    }
    const int32_t x0 = hi * g->stride_w - g->pad_left;
    if (hi < g->output_w && x0 >= 0 && x0 + 2 == g->input_w) {
        *r = hi;
    }
}

/* Output column ox (a side of pk_sides(): its window's filter columns fl0, fl0 + 1
 * inside) of nr >= NNRT_DW_PK_MIN interior rows from y0, along the column through
 * pk_run(). */
static NNRT_NOINLINE void pk_side(const run_t *k, const int8_t *in_b, int8_t *out, int32_t y0,
                                  int32_t ox, int32_t nr, int fl0)
{
    const nnrt_conv_geom_t *g = k->g;
    const size_t c = (size_t)g->input_c;
    const size_t rs = (size_t)g->input_w * c;
    const int32_t x = ox * g->stride_w - g->pad_left + fl0; /* first inside column */
    const int8_t *base = in_b + (size_t)y0 * rs + (size_t)x * c;
    int32_t off[6];
    uint8_t tap[6];
    for (int32_t t = 0; t < 6; ++t) {
        const int32_t fy = t >> 1;
        const int32_t fx = t & 1;
        off[t] = fy * (int32_t)rs + fx * (int32_t)c;
        tap[t] = (uint8_t)(3 * fy + fl0 + fx);
    }
    {
        uint32_t pw[10];
        const int s = g->stride_h;
        const int32_t *w = (const int32_t *)k->w;
        const uint32_t sumw = s == 1 ? pk_weights(pw, w, 1, 2, fl0, 1)
                                     : pk_weights(pw, w, 2, 2, fl0, 1);
        pk_walk_t wk;
        wk.n = nr;
        wk.nlo = 1;
        wk.ts = (int32_t)rs;
        wk.ls = (int32_t)c;
        wk.in_step = (size_t)s * rs;
        wk.o_step = (size_t)g->output_w * k->oc_n;
        wk.in_next = 0;
        wk.o_next = 0;
        wk.off = off;
        wk.tap = tap;
        wk.nt = 6;
        pk_run(k, pw, sumw, base, out, &wk, s, 2);
    }
}
#else
#define NNRT_DW_PK 0
#endif

static NNRT_NOINLINE void run1_3x3(const run_t *k, const int8_t *base, int8_t *out, int32_t n,
                                   int32_t rows)
{
#if NNRT_DW_PK
    if ((n >= NNRT_DW_PK_MIN || rows >= NNRT_DW_PK_MIN) && run1_3x3_pk(k, base, out, n, rows)) {
        return;
    }
#endif
    if (k->q->fast) {
        run1_3x3_body(k, base, out, n, rows, 1);
    } else {
        run1_3x3_body(k, base, out, n, rows, 0);
    }
}
#endif

/* Output channel oc, one at a time (portable C, any multiplier). */
static NNRT_COLD NNRT_NOINLINE void channel1(const nnrt_conv_s8_params_t *p, const int8_t *input,
                                   const int8_t *filter, const int32_t *bias, int8_t *output,
                                   int32_t oc, run_t *k, int border)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t c = (size_t)g->input_c;
    int32_t w[NNRT_DW_MAX_TAPS];
    for (int32_t t = 0; t < k->taps; ++t) {
        w[t] = filter[(size_t)t * k->oc_n + (size_t)oc];
    }
    nnrt_rqf_t q;
    nnrt_rqf_init(&q, p->multiplier[p->per_channel ? oc : 0], p->shift[p->per_channel ? oc : 0]);
    const int32_t b0 = bias != NULL ? bias[oc] : 0;
    k->w = w;
    k->q = &q;
    k->b0 = &b0;
#if !NNRT_DSP
    const int unrolled = g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1
                         && g->dilation_w == 1;
#endif
    int32_t lo;
    int32_t hi;
    inside_columns(g, &lo, &hi);
    int32_t off[NNRT_DW_MAX_TAPS];
    uint8_t tap[NNRT_DW_MAX_TAPS];
    const int8_t *in_c = input + oc / g->filter_c;
    int8_t *out = output + oc;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = in_c + (size_t)b * (size_t)g->input_h * (size_t)g->input_w * c;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int rows_in = y0 >= 0 && y0 + (g->filter_h - 1) * g->dilation_h < g->input_h;
#if !NNRT_DSP
            if (!border && unrolled && rows_in && lo < hi) {
                /* The interior rows from oy on, in one call (borders() does the rest). */
                int32_t nr = 1;
                while (oy + nr < g->output_h
                       && y0 + nr * g->stride_h + (g->filter_h - 1) * g->dilation_h < g->input_h) {
                    ++nr;
                }
                const int32_t x0 = lo * g->stride_w - g->pad_left;
                run1_3x3(k, in_b + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * c,
                         out + (size_t)lo * k->oc_n, hi - lo, nr);
#if NNRT_DW_PK
                if (k->sl >= 0) {
                    pk_side(k, in_b, out + (size_t)k->sl * k->oc_n, y0, k->sl, nr, 1);
                }
                if (k->sr >= 0) {
                    pk_side(k, in_b, out + (size_t)k->sr * k->oc_n, y0, k->sr, nr, 0);
                }
#endif
                out += (size_t)nr * (size_t)g->output_w * k->oc_n;
                oy += nr - 1;
                continue;
            }
#endif
            if (!border && !(rows_in && lo < hi)) {
                out += (size_t)g->output_w * k->oc_n; /* all borders() */
                continue;
            }
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += k->oc_n) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                if (rows_in && ox == lo && lo < hi) {
                    const int8_t *base = in_b + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * c;
#if !NNRT_DSP
                    if (unrolled) {
                        run1_3x3(k, base, out, hi - lo, 1);
                    } else
#endif
                    {
                        run1(k, base, out, hi - lo, k->toff, k->ident, k->taps);
                    }
                    out += (size_t)(hi - lo - 1) * k->oc_n;
                    ox = hi - 1;
                    continue;
                }
                if (border) {
                    run1(k, in_b, out, 1, off, tap, clip_taps(g, y0, x0, off, tap));
                }
            }
        }
    }
}

#if !NNRT_DSP
/* The pixels channel1(..., border = 0) leaves out (windows crossing the input's edge),
 * every output channel: the taps inside are found once per pixel, not per channel. */
static NNRT_NOINLINE void borders(const nnrt_conv_s8_params_t *p, const int8_t *input,
                                  const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t c = (size_t)g->input_c;
    const size_t oc_n = (size_t)g->output_c;
    const int32_t m = g->filter_c;
    int32_t lo;
    int32_t hi;
    inside_columns(g, &lo, &hi);
#if NNRT_RV32
    /* the rectangle of taps inside, four channels at a time (internal/rv32_dw.h) */
    nnrt_rv_dw_borders(p, input, filter, bias, output, lo, hi);
    (void)m;
    (void)c;
    (void)oc_n;
#else
    int32_t sl = -1; /* the sides channel1() takes */
    int32_t sr = -1;
#if NNRT_DW_PK
    pk_sides(g, lo, hi, &sl, &sr);
#endif
    int32_t off[NNRT_DW_MAX_TAPS];
    uint8_t tap[NNRT_DW_MAX_TAPS];
    int32_t wof[NNRT_DW_MAX_TAPS];
    const int32_t in_off = p->input_offset;
    const int32_t out_off = p->output_offset;
    const int32_t act_lo = p->act_min;
    const int32_t act_hi = p->act_max;
    int8_t *out = output;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * (size_t)g->input_h * (size_t)g->input_w * c;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int rows_in = y0 >= 0 && y0 + (g->filter_h - 1) * g->dilation_h < g->input_h;
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += oc_n) {
                if (rows_in && ((ox >= lo && ox < hi) || ox == sl || ox == sr)) {
                    continue;
                }
                const int32_t nt = clip_taps(g, y0, ox * g->stride_w - g->pad_left, off, tap);
                for (int32_t t = 0; t < nt; ++t) {
                    wof[t] = (int32_t)tap[t] * (int32_t)oc_n; /* the tap's weights */
                }
                for (int32_t oc = 0; oc < g->output_c; ++oc) {
                    const int8_t *in_c = in_b + (m == 1 ? oc : oc / m);
                    const int8_t *f = filter + oc;
                    int32_t acc = bias != NULL ? bias[oc] : 0;
                    for (int32_t t = 0; t < nt; ++t) {
                        acc += (int32_t)f[wof[t]] * ((int32_t)in_c[off[t]] + in_off);
                    }
                    const int32_t qi = p->per_channel ? oc : 0;
                    const int32_t e = -p->shift[qi] - 2; /* fast form: e in [0, 29] */
                    int32_t v;
                    if ((uint32_t)e <= 29u) {
                        v = nnrt_rqf_fast(acc, p->multiplier[qi], 1 << e, e + 1) + out_off;
                    } else {
                        v = nnrt_rq_ref(acc, p->multiplier[qi], p->shift[qi], out_off);
                    }
                    out[oc] = nnrt_act8(v, act_lo, act_hi);
                }
            }
        }
    }
#endif
}
#endif

/* What the paths of one call share (k; tap offsets in toff, tap numbers in ident). */
static NNRT_ALWAYS_INLINE void run_setup(run_t *k, const nnrt_conv_s8_params_t *p,
                                         int32_t toff[NNRT_DW_MAX_TAPS],
                                         uint8_t ident[NNRT_DW_MAX_TAPS])
{
    const nnrt_conv_geom_t *g = &p->geom;
    k->g = g;
    k->taps = g->filter_h * g->filter_w;
    for (int32_t t = 0; t < k->taps; ++t) {
        const int32_t fy = t / g->filter_w;
        const int32_t fx = t % g->filter_w;
        toff[t] = (fy * g->dilation_h * g->input_w + fx * g->dilation_w) * g->input_c;
        ident[t] = (uint8_t)t;
    }
    k->toff = toff;
    k->ident = ident;
    k->x_step = (size_t)g->stride_w * (size_t)g->input_c;
    k->oc_n = (size_t)g->output_c;
    k->in_off = p->input_offset;
    k->out_off = p->output_offset;
    k->lo = p->act_min;
    k->hi = p->act_max;
    k->full = k->lo == INT8_MIN && k->hi == INT8_MAX;
    k->fast = 0;
    k->sl = -1;
    k->sr = -1;
#if NNRT_DW_PK
    int32_t lo;
    int32_t hi;
    inside_columns(g, &lo, &hi);
    pk_sides(g, lo, hi, &k->sl, &k->sr);
#endif
}

#if NNRT_DW_PLANE
/* Every output channel through the plane path (dw_plane.h, view v), pass being
 * nnrt_dwp_pass3() (3x3) or nnrt_dwp_gen_pass() (other filters; a pointer, so that a
 * firmware links only the one its entry takes): groups of four channels (depth
 * multiplier 1: their four input channels converted together) or up to
 * NNRT_DWP_MAX_CH output channels of one input channel (they share its plane), per
 * batch. A channel outside the path's requantisation takes channel1() after its group
 * (k NULL: the caller made sure there is none). */
static NNRT_NOINLINE void plane_all(const nnrt_conv_s8_params_t *p, const nnrt_dwp_view_t *v,
                                    const int8_t *input, const int8_t *filter,
                                    const int32_t *bias, int8_t *output, run_t *k,
                                    nnrt_dwp_pass_fn pass)
{
    const nnrt_conv_geom_t *g = &p->geom;
    uint32_t buf[NNRT_DWP_WORDS];
    const int32_t m = g->filter_c;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const size_t out_batch = (size_t)g->output_h * (size_t)g->output_w * (size_t)g->output_c;
    int32_t nch = 1;
    for (int32_t oc0 = 0; oc0 < g->output_c; oc0 += nch) {
        if (m == 1) {
            nch = oc0 + 4 <= g->output_c ? 4 : 1;
        } else {
            nch = m - oc0 % m < NNRT_DWP_MAX_CH ? m - oc0 % m : NNRT_DWP_MAX_CH;
        }
        uint32_t bad = 0;
        for (int32_t b = 0; b < g->batches; ++b) {
            bad |= pass(v, buf, p, filter, bias, oc0, nch, m == 1 ? nch : 1,
                        input + (size_t)b * in_batch + (size_t)(oc0 / m),
                        output + (size_t)b * out_batch + (size_t)oc0);
        }
        for (int32_t i = 0; bad != 0 && k != NULL && i < nch; ++i) {
            if ((bad >> i) & 1u) {
                channel1(p, input, filter, bias, output, oc0 + i, k, 1);
            }
        }
    }
    if (p->act_min != INT8_MIN || p->act_max != INT8_MAX) {
        nnrt_dwp_clamp(output, (size_t)g->batches * out_batch, p->act_min, p->act_max);
    }
}
#endif

int nnrt_dw_plane_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output)
{
#if NNRT_DW_PLANE
    const nnrt_conv_geom_t *g = &params->geom;
    const int small = (int64_t)g->filter_h * g->filter_w <= NNRT_DW_MAX_TAPS;
    nnrt_dwp_view_t v;
    if ((small && (int64_t)g->output_h * g->output_w < NNRT_DW_PLANE_MIN_OUTPUTS)
        || !nnrt_dwp_view(&v, g, 1) || v.asm3) {
        return 0;
    }
    if (small) { /* a channel outside the plane path: channel1() */
        int32_t toff[NNRT_DW_MAX_TAPS];
        uint8_t ident[NNRT_DW_MAX_TAPS];
        run_t k;
        run_setup(&k, params, toff, ident);
        plane_all(params, &v, input, filter, bias, output, &k, nnrt_dwp_gen_pass);
        return 1;
    }
    if (nnrt_dwp_all_fast(params, bias)) { /* else the caller's reference loops */
        plane_all(params, &v, input, filter, bias, output, NULL, nnrt_dwp_gen_pass);
        return 1;
    }
#else
    (void)params;
    (void)input;
    (void)filter;
    (void)bias;
    (void)output;
#endif
    return 0;
}

#if NNRT_DSP
/* One tap of a group: the 4 inputs at ptr, weight pairs wp[0] = [w0 w2], wp[1] = [w1 w3]. */
#define DW_TAP4(ptr, wp)                                                                      \
    do {                                                                                      \
        const uint32_t xv_ = nnrt_ld32(ptr);                                                  \
        const uint32_t xe_ = __sxtab16(off2, xv_);                                            \
        const uint32_t xo_ = nnrt_sxtab16_ror8(off2, xv_);                                    \
        a0 = __smlabb(xe_, (wp)[0], a0);                                                      \
        a2 = __smlatt(xe_, (wp)[0], a2);                                                      \
        a1 = __smlabb(xo_, (wp)[1], a1);                                                      \
        a3 = __smlatt(xo_, (wp)[1], a3);                                                      \
    } while (0)

/* The 4 outputs of a group with some channel outside the fast form. */
static NNRT_COLD NNRT_NOINLINE void store4_any(const run_t *k, int8_t *out, const int32_t a[4])
{
    for (int32_t i = 0; i < 4; ++i) {
        out[i] = nnrt_act8(nnrt_rqf(a[i], &k->q[i], k->out_off), k->lo, k->hi);
    }
}

/* The 4 outputs of a group: requantised, clamped, stored. */
static NNRT_ALWAYS_INLINE void store4(const run_t *k, int8_t *out, int32_t a0, int32_t a1,
                                      int32_t a2, int32_t a3)
{
    const nnrt_rqf_t *q = k->q;
    if (!k->fast) {
        const int32_t a[4] = {a0, a1, a2, a3};
        store4_any(k, out, a);
        return;
    }
    const int32_t off = k->out_off;
    int32_t v0 = nnrt_sat8(nnrt_rqf_fast(a0, q[0].mult, q[0].half, q[0].rsh) + off);
    int32_t v1 = nnrt_sat8(nnrt_rqf_fast(a1, q[1].mult, q[1].half, q[1].rsh) + off);
    int32_t v2 = nnrt_sat8(nnrt_rqf_fast(a2, q[2].mult, q[2].half, q[2].rsh) + off);
    int32_t v3 = nnrt_sat8(nnrt_rqf_fast(a3, q[3].mult, q[3].half, q[3].rsh) + off);
    if (!k->full) {
        v0 = nnrt_act8(v0, k->lo, k->hi);
        v1 = nnrt_act8(v1, k->lo, k->hi);
        v2 = nnrt_act8(v2, k->lo, k->hi);
        v3 = nnrt_act8(v3, k->lo, k->hi);
    }
    out[0] = (int8_t)v0;
    out[1] = (int8_t)v1;
    out[2] = (int8_t)v2;
    out[3] = (int8_t)v3;
}

/* store4() out of line, for the colder loops. */
static NNRT_NOINLINE void store4_call(const run_t *k, int8_t *out, int32_t a0, int32_t a1,
                                      int32_t a2, int32_t a3)
{
    store4(k, out, a0, a1, a2, a3);
}

/* n pixels of a group from base: 3x3 undilated window inside the input, unrolled. */
static NNRT_NOINLINE void run4_3x3(const run_t *k, const int8_t *base, int8_t *out, int32_t n)
{
    const uint32_t *wx = (const uint32_t *)k->w;
    const size_t c = (size_t)k->g->input_c;
    const size_t rs = (size_t)k->g->input_w * c;
    const uint32_t off2 = nnrt_pair16(k->in_off);
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t a0 = k->b0[0];
        int32_t a1 = k->b0[1];
        int32_t a2 = k->b0[2];
        int32_t a3 = k->b0[3];
        const int8_t *r = base;
        DW_TAP4(r, wx);
        DW_TAP4(r + c, wx + 2);
        DW_TAP4(r + 2 * c, wx + 4);
        r += rs;
        DW_TAP4(r, wx + 6);
        DW_TAP4(r + c, wx + 8);
        DW_TAP4(r + 2 * c, wx + 10);
        r += rs;
        DW_TAP4(r, wx + 12);
        DW_TAP4(r + c, wx + 14);
        DW_TAP4(r + 2 * c, wx + 16);
        store4(k, out, a0, a1, a2, a3);
    }
}

/* n pixels of a group from base, taps off[0..nt) with weight pairs 2 * tap[i]. */
static NNRT_NOINLINE void run4(const run_t *k, const int8_t *base, int8_t *out, int32_t n,
                               const int32_t *off, const uint8_t *tap, int32_t nt)
{
    const uint32_t *wx = (const uint32_t *)k->w;
    const uint32_t off2 = nnrt_pair16(k->in_off);
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t a0 = k->b0[0];
        int32_t a1 = k->b0[1];
        int32_t a2 = k->b0[2];
        int32_t a3 = k->b0[3];
        for (int32_t t = 0; t < nt; ++t) {
            DW_TAP4(base + off[t], wx + 2 * tap[t]);
        }
        store4_call(k, out, a0, a1, a2, a3);
    }
}

/* The same for 4 output channels of one input channel (multiplier a multiple of 4): the
 * input is broadcast to both halves, [x x] = SXTAB16 of the byte in bytes 0 and 2. */
static NNRT_NOINLINE void run4b(const run_t *k, const int8_t *base, int8_t *out, int32_t n,
                                const int32_t *off, const uint8_t *tap, int32_t nt)
{
    const uint32_t *wx = (const uint32_t *)k->w;
    const uint32_t off2 = nnrt_pair16(k->in_off);
    for (int32_t i = 0; i < n; ++i, base += k->x_step, out += k->oc_n) {
        int32_t a0 = k->b0[0];
        int32_t a1 = k->b0[1];
        int32_t a2 = k->b0[2];
        int32_t a3 = k->b0[3];
        for (int32_t t = 0; t < nt; ++t) {
            const uint32_t xb = *(const uint8_t *)(base + off[t]);
            const uint32_t xx = __sxtab16(off2, xb | (xb << 16));
            const uint32_t *wp = wx + 2 * tap[t];
            a0 = __smlabb(xx, wp[0], a0);
            a2 = __smlatt(xx, wp[0], a2);
            a1 = __smlabb(xx, wp[1], a1);
            a3 = __smlatt(xx, wp[1], a3);
        }
        store4_call(k, out, a0, a1, a2, a3);
    }
}

/* Output channels [oc, oc + 4): depth multiplier 1 (4 input channels) or a multiple of
 * 4 (one input channel). */
static NNRT_NOINLINE void group4(const nnrt_conv_s8_params_t *p, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output,
                                 int32_t oc, run_t *k)
{
    const nnrt_conv_geom_t *g = &p->geom;
    const size_t c = (size_t)g->input_c;
    uint32_t wx[2 * NNRT_DW_MAX_TAPS];
    for (int32_t t = 0; t < k->taps; ++t) {
        const uint32_t wv = nnrt_ld32(filter + (size_t)t * k->oc_n + (size_t)oc);
        wx[2 * t] = __sxtb16(wv);
        wx[2 * t + 1] = nnrt_sxtb16_ror8(wv);
    }
    nnrt_rqf_t q[4];
    int32_t b0[4] = {0, 0, 0, 0};
    k->fast = 1;
    for (int32_t i = 0; i < 4; ++i) {
        const int32_t qi = p->per_channel ? oc + i : 0;
        nnrt_rqf_init(&q[i], p->multiplier[qi], p->shift[qi]);
        k->fast &= q[i].fast;
        if (bias != NULL) {
            b0[i] = bias[oc + i];
        }
    }
    k->w = wx;
    k->q = q;
    k->b0 = b0;
    const int bcast = g->filter_c != 1;
    const int unrolled = !bcast && g->filter_h == 3 && g->filter_w == 3 && g->dilation_h == 1
                         && g->dilation_w == 1;
    int32_t lo;
    int32_t hi;
    inside_columns(g, &lo, &hi);
    int32_t off[NNRT_DW_MAX_TAPS];
    uint8_t tap[NNRT_DW_MAX_TAPS];
    const int8_t *in_c = input + oc / g->filter_c;
    int8_t *out = output + oc;
    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = in_c + (size_t)b * (size_t)g->input_h * (size_t)g->input_w * c;
        for (int32_t oy = 0; oy < g->output_h; ++oy) {
            const int32_t y0 = oy * g->stride_h - g->pad_top;
            const int rows_in = y0 >= 0 && y0 + (g->filter_h - 1) * g->dilation_h < g->input_h;
            for (int32_t ox = 0; ox < g->output_w; ++ox, out += k->oc_n) {
                const int32_t x0 = ox * g->stride_w - g->pad_left;
                if (rows_in && ox == lo && lo < hi) {
                    const int8_t *base = in_b + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * c;
                    if (unrolled) {
                        run4_3x3(k, base, out, hi - lo);
                    } else if (bcast) {
                        run4b(k, base, out, hi - lo, k->toff, k->ident, k->taps);
                    } else {
                        run4(k, base, out, hi - lo, k->toff, k->ident, k->taps);
                    }
                    out += (size_t)(hi - lo - 1) * k->oc_n;
                    ox = hi - 1;
                    continue;
                }
                const int32_t nt = clip_taps(g, y0, x0, off, tap);
                if (bcast) {
                    run4b(k, in_b, out, 1, off, tap, nt);
                } else {
                    run4(k, in_b, out, 1, off, tap, nt);
                }
            }
        }
    }
}
#endif

void nnrt_dw_fast_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                     const int8_t *filter, const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &params->geom;
#if NNRT_MVE
    if (nnrt_mve_dw_s8(params, input, filter, bias, output)) {
        return;
    }
#endif
    int32_t toff[NNRT_DW_MAX_TAPS];
    uint8_t ident[NNRT_DW_MAX_TAPS];
    run_t k;
    run_setup(&k, params, toff, ident);
#if NNRT_DW_PLANE
    nnrt_dwp_view_t pv;
    if (g->filter_h == 3 && g->filter_w == 3 && nnrt_dwp_view(&pv, g, 1)) {
        plane_all(params, &pv, input, filter, bias, output, &k, nnrt_dwp_pass3);
        return;
    }
#endif
    int32_t oc = 0;
    for (; oc < g->output_c; ++oc) {
#if NNRT_DSP
        const int32_t m = g->filter_c;
        if ((m == 1 && oc + 4 <= g->output_c) || (m % 4 == 0 && oc % m + 4 <= m)) {
            group4(params, input, filter, bias, output, oc, &k);
            oc += 3;
            continue;
        }
#elif NNRT_RV32
        if (g->filter_c == 1 && oc + 4 <= g->output_c && g->filter_h == 3 && g->filter_w == 3
            && g->dilation_h == 1 && g->dilation_w == 1) {
            /* four channels at a time (internal/rv32_dw.h); borders() the rest */
            int32_t lo;
            int32_t hi;
            inside_columns(g, &lo, &hi);
            nnrt_rv_dw_group4_3x3(params, input, filter, bias, output, oc, lo, hi);
            oc += 3;
            continue;
        }
#endif
        channel1(params, input, filter, bias, output, oc, &k, NNRT_DSP);
    }
#if !NNRT_DSP
    borders(params, input, filter, bias, output);
#endif
}
