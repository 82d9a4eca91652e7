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
 *   weight word; the K % 4 tail follows at halfword 8 * (K / 4) + 4p + t.
 * - portable: pixel p's K int16 values at halfword p * K.
 * Both fit NNRT_GEMM_COLS_BYTES(K) bytes; the buffer must be 4-byte aligned.
 */
#ifndef NNRT_KERNELS_INTERNAL_GEMM_H_
#define NNRT_KERNELS_INTERNAL_GEMM_H_

#include <stddef.h>
#include <stdint.h>

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
} nnrt_gemm_s8_t;

/** The output stage for g (every field but `stage` set): once per call. */
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
