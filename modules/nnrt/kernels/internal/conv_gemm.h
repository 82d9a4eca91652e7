/*
 * Internal to the nnrt kernels: a one-group convolution without pool through the
 * matrix core (internal/nnrt_conv_gemm_s8.c).
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_GEMM_H_
#define NNRT_KERNELS_INTERNAL_CONV_GEMM_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

/** Bytes of columns and staging the matrix-core convolution needs. */
size_t nnrt_conv_gemm_bytes(const nnrt_conv_geom_t *g);

/**
 * Output pixels [from, n) of the convolution (row-major over batch, row, column), two
 * at a time; returns n. With scratch (nnrt_conv_gemm_bytes() bytes, 4-byte aligned) n is
 * every pixel. With scratch == NULL each pair's columns live in the output after the
 * pair, where nothing is written yet, and n stops at the first pair for which they do
 * not fit: the caller computes the remaining pixels. The output must not overlap the
 * input (conv.h). Arguments are checked by the caller.
 */
size_t nnrt_conv_gemm_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                         const int8_t *filter, const int32_t *bias, int8_t *output,
                         void *scratch, size_t from);

/** Stack bytes the scratch-free convolution may take for the columns of its last
 * pixels (nnrt_conv_gemm_tail_fits()). */
#define NNRT_CONV_TAIL_STACK_BYTES 1024

/*
 * The scratch-free convolution (nnrt_conv2d_opt_s8() and its specialised instances),
 * after the matrix core with its columns in the output stopped at pixel `done`: 1 when
 * pixels are left and the core's columns (need bytes) fit a stack buffer of
 * NNRT_CONV_TAIL_STACK_BYTES; the caller then runs the core on the rest with that
 * buffer as scratch, before the per-pixel loops (nnrt_conv_pixels_from()) take what is
 * still left. Through the core a pixel costs a few times fewer instructions
 * (kws_ref_model's pointwise convs: 5 of 125 pixels were 14 % of the op).
 */
static inline int nnrt_conv_gemm_tail_fits(const nnrt_conv_geom_t *g, size_t need,
                                           size_t done)
{
    return done < (size_t)g->batches * (size_t)g->output_h * (size_t)g->output_w
           && need <= NNRT_CONV_TAIL_STACK_BYTES;
}

/** Stack bytes nnrt_conv_gemm_pool_s8() may take for its columns, staging and two
 * pixels' outputs (a larger geometry runs the reference loops). */
#define NNRT_CONV_POOL_STACK_BYTES 1024

/**
 * A one-group convolution with its fused max pool (params->pool not NULL) through the
 * matrix core (internal/nnrt_conv_gemm_pool_s8.c), without scratch: the conv pixels of
 * each pool window two at a time, their columns and outputs in a stack buffer of at
 * most NNRT_CONV_POOL_STACK_BYTES, max-merged into the pooled output, then clamped to
 * the pool's range. Returns 0 (nothing written) when the geometry's buffer does not fit
 * there, else 1. Arguments are checked by the caller.
 */
int nnrt_conv_gemm_pool_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                           const int8_t *filter, const int32_t *bias, int8_t *output);

#endif /* NNRT_KERNELS_INTERNAL_CONV_GEMM_H_ */
