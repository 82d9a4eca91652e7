/*
 * Internal to the nnrt kernels: the int8 matrix core of the fast convolutions
 * (nnrt_conv2d_1x1_s8, nnrt_conv2d_im2col_s8).
 *
 * Two output pixels at a time: their input columns (the 1x1 input vector, or the
 * im2col patch) are converted once into a small scratch block of int16 values with the
 * input offset already added ("cols"), then every output channel pair runs over them:
 * a 2 x 2 block (2 pixels x 2 channels) of int32 accumulators, one weight row per
 * channel read straight from the [OC][K] filter. Requantisation happens once per
 * output, after the depth loop.
 *
 * Cols layout (private to nnrt_gemm_s8.c; writers go through nnrt_cols_put_s8):
 * - DSP: K is cut into chunks of 4; chunk j of pixel p is the two words
 *   [x0 x2] [x1 x3] (int16 halves) at word 4j + 2p, matching __sxtb16 / ror-8 of a
 *   weight word; the K % 4 tail is a partial last chunk in the same layout (its
 *   positions past K are not read, or read against a weight of 0).
 * - packed (NNRT_GEMM_PACKED: Thumb-2 without the DSP extension, the Cortex-M3 and
 *   the AN521's M33): one int32 word per depth position k, both pixels in it,
 *   word k = x0 + x1 * 2^23 (x0, x1: the pixels' values with the offset added, in
 *   [-255, 255] as the int8 zero point is in [-128, 127]). Pixel 0's writer stores
 *   x0 + off * 2^23, pixel 1's adds its x * 2^23 (so pixel 0 is written first, as every
 *   caller does). One SMLAL by a weight then accumulates both pixels' products in a
 *   64-bit sum, sum_0 + sum_1 * 2^23; sum_0 is split off (its low 23 bits, sign
 *   extended) every 128 positions, before it can reach 2^22 (128 * 128 * 255 < 2^22).
 * - portable: pixel p's K int16 values at halfword p * K.
 * All fit NNRT_GEMM_COLS_BYTES(K) bytes; the buffer must be 4-byte aligned.
 */
#ifndef NNRT_KERNELS_INTERNAL_GEMM_H_
#define NNRT_KERNELS_INTERNAL_GEMM_H_

#include <stddef.h>
#include <stdint.h>

#include "mve.h"
#include "requant.h"
#include "simd.h"

/* The packed columns above (SMLAL: Armv7-M / Armv8-M mainline), on cores without the
 * DSP extension's SMLAD. */
#if defined(__thumb2__) && !NNRT_DSP && !defined(NNRT_PORTABLE_ONLY)
#define NNRT_GEMM_PACKED 1
#else
#define NNRT_GEMM_PACKED 0
#endif

/** Bytes of cols for two pixels of depth k (both layouts). */
#define NNRT_GEMM_COLS_BYTES(k) ((size_t)16 * (((size_t)(k) + 3u) / 4u))

/** The weights and output stage of one convolution. */
typedef struct {
    int32_t k;                  /* depth of a column, >= 1 */
    int32_t oc;                 /* output channels, >= 1 */
    const int8_t *filter;       /* [oc][k] */
    const int32_t *bias;        /* [oc] or NULL */
    const int32_t *multiplier;  /* [oc] or [1] */
    const int32_t *shift;       /* [oc] or [1] */
    int32_t per_channel;
    int32_t output_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t stage;              /* from nnrt_gemm_s8_stage(): 1 clamp to the activation
                                   range, 2 the range is all of int8 (SSAT only) */
    const int32_t *rq;          /* NULL, or the channel records below (then bias,
                                   multiplier and shift are not read) */
#if NNRT_MVE
    const int32_t *bias_off;    /* NULL, or with rq set [oc]: each channel's bias plus
                                   the input offset times the sum of its weights, for
                                   the Helium loop (internal/mve_gemm.h: then no weight
                                   sums); a field of Helium builds only */
#endif
} nnrt_gemm_s8_t;

/* The bias_off field's initializer (", p") in Helium builds, nothing elsewhere: the last
 * item of every nnrt_gemm_s8_t initializer, so that one text (the generated one too)
 * initialises every field on every core. */
#if NNRT_MVE
#define NNRT_GEMM_BIAS_OFF(p) , p
#else
#define NNRT_GEMM_BIAS_OFF(p)
#endif

/*
 * Channel records: the output stage of every channel prepared at build time (code
 * generation, nnopt.lowering.specialize.gemm_records()) for a specialised op whose
 * channels all take the folded fast form of requant.h (nnrt_rq_fold(): shift -31..-3,
 * the output offset inside the addend). Per channel pair (2j, 2j + 1), 8 words:
 *
 *   bias(2j) bias(2j+1) | mult addend rsh (2j) | mult addend rsh (2j+1)
 *
 * an odd last channel: its bias, one unused word, its mult addend rsh. The biases come
 * first so that one LDRD starts both accumulator pairs; rsh is in [2, 30] (an even
 * addend: the assembly pair loop takes the start value's sign bit from the parity of
 * its high word), and bit 8 of the last pair's second rsh marks the end of the pairs
 * (a register shift reads only the bottom byte). A channel whose output is the same
 * for every reachable accumulator is stored as multiplier 0, rsh 2.
 */
#define NNRT_GEMM_RQ_WORDS(oc) (8 * ((size_t)(oc) / 2u) + 5 * ((size_t)(oc) & 1u))
#define NNRT_GEMM_RQ_LAST 0x100

/* Channel c's bias, and its words mult, addend, rsh, in the records rq. */
static inline int32_t nnrt_gemm_rq_bias(const int32_t *rq, int32_t c)
{
    return rq[8 * (c >> 1) + (c & 1)];
}

static inline const int32_t *nnrt_gemm_rq_ch(const int32_t *rq, int32_t c)
{
    return rq + 8 * (c >> 1) + 2 + 3 * (c & 1);
}

/* One output of a channel by its record r = {mult, addend, rsh (bottom byte)}: the
 * requantised value plus the output offset, not clamped. */
static inline int32_t nnrt_gemm_rq_out(int32_t acc, const int32_t *r)
{
    return nnrt_rq_fold(acc, r[0], r[1], r[2] & 0xFF);
}

/** The output stage for g (every field but `stage` and `rq` set): once per call. */
int nnrt_gemm_s8_stage(const nnrt_gemm_s8_t *g);

/** Channels oc and oc + d of a pixel pair with the reference requantisation (a channel
 * outside the fast form), out of line and cold (internal/nnrt_gemm_ref_s8.c): the
 * accumulators a00 / a01 of channel oc (pixels 0 / 1), a10 / a11 of oc + d. */
void nnrt_gemm_pair_ref(const nnrt_gemm_s8_t *g, int32_t oc, int32_t d, int32_t a00,
                        int32_t a01, int32_t a10, int32_t a11, int8_t *out0, int8_t *out1);

/** cols[pixel p][k0 + i] = x[i] + input_offset for i < n. */
void nnrt_cols_put_s8(void *cols, int32_t k, int32_t p, int32_t k0, const int8_t *x,
                      int32_t n, int32_t input_offset);

/**
 * All g->oc outputs of the two pixels in cols: out0[oc] for pixel 0, out1[oc] for
 * pixel 1 (out1 NULL: pixel 1 is not stored; then its cols must equal pixel 0's).
 */
void nnrt_gemm_s8_2px(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, int8_t *out1);

#endif /* NNRT_KERNELS_INTERNAL_GEMM_H_ */
