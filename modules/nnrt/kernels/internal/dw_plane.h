/*
 * Internal to the nnrt kernels: the "plane" path of the int8 depthwise kernels on DSP
 * cores (undilated filters up to NNRT_DWP_MAX_K x NNRT_DWP_MAX_K with a stride of 1 or 2
 * along a line; 3x3 in assembly, the others in C), shared by the classic kernel
 * (nnrt_dw_s8.c) and the in-place one (conv/nnrt_depthwise_conv2d_inplace_s8.c). Not a
 * public header.
 *
 * The input lines (rows, or columns: see nnrt_dwp_view_t) the windows read are
 * converted per channel into an int16 plane on the stack: raw input values, and the
 * input zero point wherever a window leaves the input. With the input offset folded
 * into the start value, b = bias + in_off * sum(w), every output is b + sum(w * x) over
 * all taps of the plane: a tap TFLM skips contributes w * (x + in_off) = 0 there,
 * exactly. Two neighbouring outputs of a line then share their loads: for a 3x3 filter
 * line's weights as the pairs A = [w0 w1], B = [w1 w2] and the plane's values as pairs
 * P0 = [x0 x1], P2 = [x2 x3] (one LDRD),
 *
 *   out0 += SMLAD(P0, A) + SMLABT(P2, B),  out1 += SMLATB(P0, A) + SMLAD(P2, B)
 *
 * (stride 2: out_i += SMLAD(P(2i), A) + SMLABT(P(2i+2), B)): 3 MACs per instruction
 * pair. The assembly of nnrt_dw_plane_s8.c runs four outputs of a line at a time (a
 * pair and a single one at the end), all the lines of a run of a few channels in one
 * call. Other filters take the same pairing in C (nnrt_dwp_gen_pass()).
 *
 * Requantisation in four instructions per output, with the weights and the start value
 * doubled (exact while |acc| < 2^30: |b| < 2^30 - taps * 2^15, checked per channel):
 * TFLM's result for e = -shift >= 1 is floor((u + 2^(30+e)) / 2^(31+e)),
 * u = acc * m +- 2^30 by the sign of acc (internal/requant.h). Doubled,
 * 2u = 2acc * m + 2^31 - [acc < 0] 2^32, so floor(2u / 2^32) = SMMLAR(2acc, m) - [acc < 0]
 * (SMMLAR: the high word of Ra * 2^32 + Rn * Rm + 2^31), and with 2^(31+e) a multiple of
 * 2^32
 *
 *   out = SMMLAR(2acc, m, add + (2acc >> 31)) >> e,  add = 2^(e-1) + out_off 2^e
 *
 * then SSAT to int8 (the output offset, a multiple of 2^e, passes the shift exactly).
 * No overflow: the high word is within +-2^30 and |add| < 2^30 (e <= 22). A channel
 * outside that form (shift >= 0 or below -22, a huge bias) gets zero constants here and
 * the caller's general path afterwards; an activation range narrower than int8 is
 * applied to the stored bytes at the end (nnrt_dwp_clamp()).
 *
 * The plane of a strip of lines is a ring of lines (nnrt_dwp_ring_t): every input line
 * is converted once, and a run of output lines whose windows lie in consecutive ring
 * lines goes to the assembly in one call. Four channels (depth multiplier 1) are
 * converted together, each 32-bit input word giving a value of four planes.
 */
#ifndef NNRT_KERNELS_INTERNAL_DW_PLANE_H_
#define NNRT_KERNELS_INTERNAL_DW_PLANE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "simd.h"

#if NNRT_DSP
#define NNRT_DW_PLANE 1
#else
#define NNRT_DW_PLANE 0
#endif

#if NNRT_DW_PLANE
/* Words (int16 pairs) of the plane buffer: 1.6 KB of stack. */
#define NNRT_DWP_WORDS 400

/* Channels of one call of the assembly (their constants live on the caller's stack). */
#define NNRT_DWP_MAX_CH 8

/* The generic path (filters other than 3x3): at most this many filter lines and taps
 * per line, and this many words of a channel's paired weights (on the stack). */
#define NNRT_DWP_MAX_K 16
#define NNRT_DWP_GEN_WORDS 64

/* One channel's constants, as the assembly reads them (13 words). */
typedef struct {
    int32_t b[4];          /* the doubled start value, four times (one LDM per quad) */
    int32_t mae[3];        /* Q31 multiplier, addend 2^(e-1) + output offset * 2^e, shift e */
    uint32_t w[6];         /* filter line r: w[2r] = A = [2w0 2w1], w[2r+1] = B = [2w1 2w2] */
} nnrt_dwp_ch_t;

/* One call of the assembly: lines of outputs of nch channels (13 words, copied to its
 * stack; offsets in nnrt_dw_plane_s8.c). Channel c reads the plane lines p[i] + c * ps
 * and writes out + c. */
typedef struct {
    const uint32_t *p[3];  /* the plane lines of the first output line's windows */
    int8_t *out;           /* the first output */
    int32_t quads;         /* outputs per line / 4 */
    int32_t tail;          /* outputs per line % 4 */
    int32_t rows;          /* output lines */
    int32_t p_next;        /* plane bytes from the end of an output line to the next */
    int32_t o_next;        /* output bytes from the end of an output line to the next */
    int32_t step;          /* output bytes between neighbours on a line */
    int32_t ps;            /* plane bytes from one channel's plane to the next's */
    int32_t nch;           /* channels */
    const nnrt_dwp_ch_t *ch;
} nnrt_dwp_job_t;

/* The convolution seen along lines: rows (transposed 0) or columns (1). "Along" is the
 * direction of a line, whose stride must be 1 or 2. */
typedef struct {
    int32_t n;             /* outputs per line */
    int32_t lines;         /* output lines */
    int32_t s;             /* stride along */
    int32_t sl;            /* stride across */
    int32_t pad;           /* padding along */
    int32_t len;           /* input extent along */
    int32_t first;         /* input line of output line 0's windows (-padding across) */
    int32_t count;         /* input lines */
    int32_t step;          /* input bytes between neighbours along */
    int32_t line;          /* input bytes between lines */
    int32_t out_step;      /* output bytes between neighbours along */
    int32_t out_line;      /* output bytes between lines */
    int32_t kw;            /* filter taps along */
    int32_t kh;            /* filter lines */
    int32_t f_along;       /* filter bytes between taps along */
    int32_t f_across;      /* filter bytes between filter lines */
    int32_t transposed;
    int32_t asm3;          /* 3x3: the assembly; else the generic C */
} nnrt_dwp_view_t;

/* A strip of a few planes as a ring of lines (the buffer's planes one after the
 * other); one line is wpw pairs. */
typedef struct {
    const nnrt_dwp_view_t *v;
    uint32_t *buf;
    const int8_t *in;      /* channel 0's input at line 0, position 0 */
    int32_t planes;        /* 4: four neighbouring channels converted together; 1 */
    int32_t wpw;           /* words per line */
    int32_t lines;         /* lines in the ring */
    int32_t x0;            /* input position of the strip's first window */
    int32_t wn;            /* input positions the strip's windows span */
    int32_t pairs;         /* words of a line the strip writes: (wn + 1) / 2 */
    int32_t zl;            /* of which zero-point pairs first */
    int32_t lodd;          /* then a pair [zero point, value] (0 or 1) */
    int32_t np;            /* then pairs of values */
    int32_t rodd;          /* then a pair [value, zero point] (0 or 1), zero points after */
    int32_t off;           /* input bytes from a line to the strip's first value */
    int32_t filled;        /* next line (from v->first) to convert */
    int32_t adv;           /* plane bytes an output line's outputs advance over */
    int32_t z;             /* input zero point */
} nnrt_dwp_ring_t;

/** A ring of `planes` planes for view v in buf, over input in (channel 0's at line 0,
 *  position 0), z the input zero point; nnrt_dwp_strip() starts a strip. */
static inline void nnrt_dwp_ring(nnrt_dwp_ring_t *r, const nnrt_dwp_view_t *v, uint32_t *buf,
                                 const int8_t *in, int32_t planes, int32_t z)
{
    r->v = v;
    r->buf = buf;
    r->in = in;
    r->planes = planes;
    r->z = z;
}

/** The view of g along rows, or along columns when allow_transposed, stride_h is 1 or 2
 *  and that takes fewer instructions (tall narrow maps) or rows cannot (stride_w above
 *  2); 1 when the plane path takes g so (undilated, the filter within the bounds). */
int nnrt_dwp_view(nnrt_dwp_view_t *v, const nnrt_conv_geom_t *g, int allow_transposed);

/** Outputs per strip when `planes` planes share the buffer. */
int32_t nnrt_dwp_per_strip(const nnrt_dwp_view_t *v, int32_t planes);

/** The constants of output channels [oc, oc + n) (n <= NNRT_DWP_MAX_CH), in the view's
 *  orientation. Returns the channels outside the plane path (bit i: channel oc + i),
 *  whose constants are zero, harmless in the assembly: the caller computes them
 *  otherwise. */
uint32_t nnrt_dwp_channels(nnrt_dwp_ch_t *c, const nnrt_dwp_view_t *v,
                           const nnrt_conv_s8_params_t *p, const int8_t *filter,
                           const int32_t *bias, int32_t oc, int32_t n);

/** Start the strip of outputs [ox0, ox0 + n) of every line (r: v, buf, in, planes, z
 *  set): the ring's geometry and the job's line fields (quads, tail, o_next, step, ps). */
void nnrt_dwp_strip(nnrt_dwp_ring_t *r, nnrt_dwp_job_t *j, int32_t ox0, int32_t n);

/** Convert the lines output lines [ol, ol + k) read, k <= max_k as long as their
 *  windows stay in consecutive ring lines (at least 1); the job's plane pointers,
 *  p_next and rows set. Returns k. */
int32_t nnrt_dwp_lines(nnrt_dwp_ring_t *r, nnrt_dwp_job_t *j, int32_t ol, int32_t max_k);

/** Every output line of the view for channels [0, nch) of ch (nch <= NNRT_DWP_MAX_CH):
 *  planes 4 (four neighbouring input channels from in) or 1 (one input channel: every
 *  channel reads its plane); out is channel 0's first output. */
void nnrt_dwp_pass(const nnrt_dwp_view_t *v, uint32_t *buf, const nnrt_dwp_ch_t *ch, int32_t nch,
                   int32_t planes, const int8_t *in, int8_t *out, int32_t z);

/** A pass over output channels [oc, oc + nch) (nch <= NNRT_DWP_MAX_CH) of one batch
 *  (in: their input, four neighbouring channels (planes 4) or one; out: channel oc's
 *  first output). Returns the channels outside the plane path (bit i: channel oc + i),
 *  not computed or not correctly. */
typedef uint32_t (*nnrt_dwp_pass_fn)(const nnrt_dwp_view_t *v, uint32_t *buf,
                                     const nnrt_conv_s8_params_t *p, const int8_t *filter,
                                     const int32_t *bias, int32_t oc, int32_t nch,
                                     int32_t planes, const int8_t *in, int8_t *out);

/** The 3x3 path (v->asm3): the channels' constants (nnrt_dwp_channels()), then
 *  nnrt_dwp_pass(). */
uint32_t nnrt_dwp_pass3(const nnrt_dwp_view_t *v, uint32_t *buf, const nnrt_conv_s8_params_t *p,
                        const int8_t *filter, const int32_t *bias, int32_t oc, int32_t nch,
                        int32_t planes, const int8_t *in, int8_t *out);

/** The generic path (v->asm3 0), one channel at a time. */
uint32_t nnrt_dwp_gen_pass(const nnrt_dwp_view_t *v, uint32_t *buf,
                           const nnrt_conv_s8_params_t *p, const int8_t *filter,
                           const int32_t *bias, int32_t oc, int32_t nch, int32_t planes,
                           const int8_t *in, int8_t *out);

/** 1 when every output channel takes the plane path's requantisation. */
int nnrt_dwp_all_fast(const nnrt_conv_s8_params_t *p, const int32_t *bias);

/** 1 when nnrt_dwp_pass() with `planes` planes converts every input line it reads
 *  before it writes any output (one strip, the lines all in the ring). */
int nnrt_dwp_converts_first(const nnrt_dwp_view_t *v, int32_t planes);

/** Run the job (every field set). */
void nnrt_dwp_run(const nnrt_dwp_job_t *j, int32_t stride);

/** n int8 values clamped to [lo, hi]. */
void nnrt_dwp_clamp(int8_t *x, size_t n, int32_t lo, int32_t hi);
#endif /* NNRT_DW_PLANE */

#endif /* NNRT_KERNELS_INTERNAL_DW_PLANE_H_ */
