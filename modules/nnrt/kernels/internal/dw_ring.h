/*
 * Internal to the nnrt kernels: the 3x3 depthwise "ring" path of the int8 kernels, one
 * group of 4 output channels (depth multiplier 1: 4 input channels; a multiple of 4: one
 * input channel) at a time, shared by the classic kernel (nnrt_dw_s8.c, strips of output
 * columns) and the in-place one (conv/nnrt_depthwise_conv2d_inplace_s8.c, output rows
 * into its scratch ring). Not a public header.
 *
 * The ring path: depth multiplier 1, 3x3 undilated, every channel of the group in the
 * fast form with the output offset folded into its rounding addend. The group's input
 * rows are converted once into int16 pairs with the input offset added ([x0 x2] [x1 x3]
 * per column, SXTAB16), padded on both sides to the width the windows span with zero
 * pairs (the taps TFLM skips contribute exactly 0), and held in a ring of three rows on
 * the stack (a row outside the input is all zeros). Every output pixel then runs the
 * same nine taps with two loads each (no border case, no conversion per tap), and its
 * four outputs are packed into one word, clamped with SSUB8 / SEL and stored at once.
 *
 * The caller prepares a group once (nnrt_dw_ring_init(): weights, biases, output
 * stages), starts a strip of input columns (nnrt_dw_ring_strip()), then asks for output
 * rows in increasing order (nnrt_dw_ring_rows()), which converts the input rows the
 * windows of that row read unless the ring holds them already.
 */
#ifndef NNRT_KERNELS_INTERNAL_DW_RING_H_
#define NNRT_KERNELS_INTERNAL_DW_RING_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "requant.h"
#include "simd.h"

/* The ring path's assembly needs more registers than an unoptimised build (-O0,
 * Zephyr's CONFIG_NO_OPTIMIZATIONS: frame pointer, operands spilled) leaves ("impossible
 * constraints"): such builds take the kernels' group paths, the same arithmetic. */
#if NNRT_DSP && defined(__OPTIMIZE__)
#define NNRT_DW_RING 1
#else
#define NNRT_DW_RING 0
#endif

#if NNRT_DW_RING
/* Columns of 4 channels in a ring row: 3 * 8 * DW_RING_COLS bytes of stack (1.5 KB).
 * Wider outputs run in strips of output columns whose windows fit. */
#define DW_RING_COLS 64

/* One channel's output stage on the ring path: nnrt_rqf_fast(acc, mult, add, rsh) with
 * add = 2^(rsh-1) + (output offset << rsh), which equals the fast form plus the offset
 * exactly (the offset term is a multiple of 2^rsh) and cannot overflow while
 * |add| < 2^30 (|high word| <= 2^30, requant.h). A channel outside that form (shift -1
 * and above, or an addend that does not fit) has rsh = -1 and add = its TFLM shift: the
 * reference requantisation, out of line (ring_rq_ref()). */
typedef struct {
    int32_t mult;
    int32_t add;
    int32_t rsh;
} dw_rq_t;

/* What every pixel of the ring path reads: weight pairs, biases, output stages. */
typedef struct {
    uint64_t wx[9];  /* tap t: [w0 w2] (low word), [w1 w3] (high word) */
    int32_t b[4];
    dw_rq_t rq[4];
    int32_t out_off; /* for the channels outside the fast form */
} ring_k_t;

/* A strip of output columns: ring column j holds input column x0 + j, j < cols. */
typedef struct {
    int32_t x0;
    int32_t cols;
} ring_strip_t;

/* One group's ring: three rows of column pairs, which input row each holds, the strip,
 * and what every pixel reads. */
typedef struct {
    uint64_t rows[3][DW_RING_COLS];
    int32_t held[3];     /* input row y in rows[(y + 3) % 3], INT32_MIN: none */
    ring_strip_t st;
    int32_t n;           /* output columns of the strip */
    ring_k_t kc;
    uint32_t off2;       /* input offset in both halfwords */
    uint32_t lo4;        /* activation bounds in all four bytes */
    uint32_t hi4;
    int32_t full;        /* the activation range is all of int8 */
    int32_t mixed;       /* some channel outside the folded fast form */
} nnrt_dw_ring_t;

/** 1 when the ring path takes a geometry: 3x3 undilated, pad_left >= 0,
 * 0 <= pad_top <= 2 (the group's multiplier is the caller's concern). */
int nnrt_dw_ring_fits(const nnrt_conv_geom_t *g);

/** Output columns per strip: the ring's width of windows. */
static inline int32_t nnrt_dw_ring_per_strip(const nnrt_conv_geom_t *g)
{
    return (DW_RING_COLS - 3) / g->stride_w + 1;
}

/** A group: wx[2 t] = [w0 w2], wx[2 t + 1] = [w1 w3] of tap t (sign-extended pairs),
 * its biases and requantisations, the input and output offsets, the activation range. */
void nnrt_dw_ring_init(nnrt_dw_ring_t *r, const uint32_t wx[18], const int32_t b[4],
                       const nnrt_rqf_t q[4], int32_t in_off, int32_t out_off, int32_t act_lo,
                       int32_t act_hi);

/** Start the strip of output columns [ox0, ox0 + n) (n <= nnrt_dw_ring_per_strip()). */
void nnrt_dw_ring_strip(nnrt_dw_ring_t *r, const nnrt_conv_geom_t *g, int32_t ox0, int32_t n);

/** Output rows [oy, oy + rows) of the strip: in_b is the group's first input channel
 * of its batch; a row's n outputs go to out, oc_n bytes apart, 4 channels each, the
 * next row's out_rs bytes further. */
void nnrt_dw_ring_rows(nnrt_dw_ring_t *r, const nnrt_conv_geom_t *g, const int8_t *in_b,
                       int32_t oy, int32_t rows, int8_t *out, size_t out_rs, size_t oc_n);
#endif /* NNRT_DW_RING */

#endif /* NNRT_KERNELS_INTERNAL_DW_RING_H_ */
