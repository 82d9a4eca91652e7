/**
 * @file conv.h
 * @brief 2-D convolution and depthwise convolution (CONV_2D, DEPTHWISE_CONV_2D),
 *        optionally with a max-pool folded into the output (Unlu 2020); transposed
 *        convolution (TRANSPOSE_CONV, at the end of this file).
 *
 * Bit-exact with TensorFlow Lite Micro's reference kernels:
 * - int8: `acc = sum(w * (x + input_offset))` over the taps that fall inside the
 *   input (padding contributes nothing), `+ bias[oc]` (int32, optional), then
 *   nnrt_multiply_by_quantized_multiplier() with the output channel's (multiplier,
 *   shift) (or the one per-tensor pair), `+ output_offset`, clamped to
 *   [act_min, act_max]. Weights are symmetric (zero point 0).
 * - float32: taps summed in [filter_y][filter_x][in_channel] order starting from 0,
 *   then `+ bias`, then clamped to [act_min, act_max].
 *
 * Layouts (row-major, channels innermost):
 * - input  `[N,H,W,C]`;
 * - conv filter `[OC,KH,KW,C/groups]` (OHWI), output `[N,OH,OW,OC]`; grouped
 *   convolution when the filter's input depth divides C (groups = C / filter_c);
 * - depthwise filter `[1,KH,KW,C*M]`, output channel `oc = ic * M + m`.
 *
 * Fused max pool: when `pool` is not NULL the output is the POOLED tensor
 * `[N,PH,PW,OC]`: each pooled element is the maximum over its pooling window of the
 * conv outputs (each already requantised and clamped), then clamped to the pool's
 * activation range, exactly as CONV_2D followed by MAX_POOL_2D. Only the conv outputs a
 * window needs are computed; the running maximum lives in the output element itself,
 * so no full-resolution buffer and no scratch memory is needed. Windows are clipped to
 * the conv output like TFLM's max pool (SAME padding never wins).
 *
 * Variants (all int8 kernels give identical results; `nnopt.lowering.conv` picks the
 * fastest one that fits the op at build time, so a firmware links only what it uses).
 * Naming: `_opt_` in a kernel name (nnrt_conv2d_opt_s8(), nnrt_depthwise_conv2d_opt_s8())
 * means the scratch-free fast variant, the one a plan with no scratch buffer runs; the
 * names stay because generated model sources call them:
 * - nnrt_conv2d_s8(): any geometry, groups, fused pool; no scratch. One group without
 *   a pool runs nnrt_conv2d_opt_s8(): the matrix core below with its columns in the
 *   part of the output not yet written; one group with a fused pool runs the same core
 *   over each pool window's conv pixels, two at a time, with their columns in a stack
 *   buffer of at most 1 KB (geometries whose columns need more: the reference loops);
 *   otherwise the reference loops.
 * - nnrt_depthwise_conv2d_s8(): any geometry, multiplier, fused pool; no scratch.
 *   Without a pool (filters up to 25 taps) it runs nnrt_depthwise_conv2d_opt_s8():
 *   output channels in groups of four with their weights pre-extended once
 *   (8 * KH * KW bytes of stack), SMLABB/SMLATT on DSP cores; otherwise the reference
 *   loops.
 * - nnrt_conv2d_1x1_s8(): 1x1 filter, one group, no padding, any stride, no pool.
 * - nnrt_conv2d_im2col_s8(): any filter, stride, dilation and padding, one group, no
 *   pool.
 *   These two run a 2-pixel x 2-channel matrix core over int16 columns converted once
 *   per pixel pair (the caller's scratch, `*_get_buffer_size()` bytes, 4-byte aligned);
 *   on cores with the DSP extension (Cortex-M4/M7/M33...) with SIMD (SXTB16, SMLAD),
 *   elsewhere in portable C with the same blocking.
 * Requantisation runs once per output with one 64-bit multiply-accumulate
 * (bit-exact with TFLM's two rounding steps).
 *
 * All parameters (padding, multipliers, activation ranges) are computed at build time
 * by `nnopt.lowering.conv`. The output must not overlap the input, the weights or the
 * scratch.
 */
#ifndef NNRT_KERNELS_CONV_H_
#define NNRT_KERNELS_CONV_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Geometry of a 2-D convolution over `[N,H,W,C]`. */
typedef struct {
    int32_t batches;     /**< N, >= 1 */
    int32_t input_h;     /**< H, >= 1 */
    int32_t input_w;     /**< W, >= 1 */
    int32_t input_c;     /**< C, >= 1 */
    int32_t output_h;    /**< OH of the conv output (before any fused pool), >= 1 */
    int32_t output_w;    /**< OW of the conv output (before any fused pool), >= 1 */
    int32_t output_c;    /**< OC, >= 1 (depthwise: C * depth_multiplier) */
    int32_t filter_h;    /**< KH, >= 1 */
    int32_t filter_w;    /**< KW, >= 1 */
    int32_t filter_c;    /**< conv: input depth of the filter, divides C and OC is a
                              multiple of C / filter_c; depthwise: depth multiplier M */
    int32_t stride_h;    /**< >= 1 */
    int32_t stride_w;    /**< >= 1 */
    int32_t dilation_h;  /**< >= 1 */
    int32_t dilation_w;  /**< >= 1 */
    int32_t pad_top;     /**< rows of implicit zero padding above the input, >= 0 */
    int32_t pad_left;    /**< columns of implicit zero padding left of the input, >= 0 */
} nnrt_conv_geom_t;

/** A max-pool window folded into a convolution's output. */
typedef struct {
    int32_t output_h;    /**< PH, rows of the pooled output, >= 1 */
    int32_t output_w;    /**< PW, columns of the pooled output, >= 1 */
    int32_t filter_h;    /**< window height, >= 1 */
    int32_t filter_w;    /**< window width, >= 1 */
    int32_t stride_h;    /**< >= 1 (the fusion pass uses stride >= filter: no overlap) */
    int32_t stride_w;    /**< >= 1 */
    int32_t pad_top;     /**< >= 0; every window must reach into the conv output */
    int32_t pad_left;    /**< >= 0 */
    int32_t act_min;     /**< int8: pool activation range in [-128, 127] (unused for float) */
    int32_t act_max;     /**< int8: >= act_min */
    float act_min_f;     /**< float32: pool activation lower bound (-FLT_MAX for none) */
    float act_max_f;     /**< float32: pool activation upper bound (FLT_MAX for none) */
} nnrt_conv_pool_t;

/** int8 convolution parameters (also used by the depthwise kernel). */
typedef struct {
    nnrt_conv_geom_t geom;
    int32_t input_offset;       /**< minus the input zero point, in [-127, 128] */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t act_min;            /**< fused activation lower bound, in [-128, act_max] */
    int32_t act_max;            /**< fused activation upper bound, in [act_min, 127] */
    int32_t per_channel;        /**< 1: multiplier/shift hold OC entries; 0: one for all */
    const int32_t *multiplier;  /**< [OC] or [1] Q31 multipliers, from quantize_multiplier() */
    const int32_t *shift;       /**< [OC] or [1] shifts (> 0: left), in [-31, 30] */
    const nnrt_conv_pool_t *pool; /**< fused max pool, or NULL */
} nnrt_conv_s8_params_t;

/** float32 convolution parameters (also used by the depthwise kernel). */
typedef struct {
    nnrt_conv_geom_t geom;
    float act_min;              /**< fused activation lower bound (-FLT_MAX for none) */
    float act_max;              /**< fused activation upper bound (FLT_MAX for none) */
    const nnrt_conv_pool_t *pool; /**< fused max pool, or NULL */
} nnrt_conv_f32_params_t;

/**
 * Check a conv geometry (and pool, if any) for the kernels: positive extents, strides
 * and dilations, non-negative padding, group structure (`depthwise` selects the
 * depthwise rule OC == C * M). O(1).
 */
static inline int nnrt_conv_geom_valid(const nnrt_conv_geom_t *g, const nnrt_conv_pool_t *p,
                                       int depthwise)
{
    if (g->batches < 1 || g->input_h < 1 || g->input_w < 1 || g->input_c < 1
        || g->output_h < 1 || g->output_w < 1 || g->output_c < 1 || g->filter_h < 1
        || g->filter_w < 1 || g->filter_c < 1 || g->stride_h < 1 || g->stride_w < 1
        || g->dilation_h < 1 || g->dilation_w < 1 || g->pad_top < 0 || g->pad_left < 0) {
        return 0;
    }
    if (depthwise) {
        if ((int64_t)g->input_c * g->filter_c != g->output_c) {
            return 0;
        }
    } else if (g->input_c % g->filter_c != 0 || g->output_c % (g->input_c / g->filter_c) != 0) {
        return 0;
    }
    if (p != NULL) {
        if (p->output_h < 1 || p->output_w < 1 || p->filter_h < 1 || p->filter_w < 1
            || p->stride_h < 1 || p->stride_w < 1 || p->pad_top < 0 || p->pad_left < 0
            || p->filter_h - p->pad_top <= 0 || p->filter_w - p->pad_left <= 0
            || (int64_t)(p->output_h - 1) * p->stride_h - p->pad_top >= g->output_h
            || (int64_t)(p->output_w - 1) * p->stride_w - p->pad_left >= g->output_w) {
            return 0;
        }
    }
    return 1;
}

/**
 * The argument check of every int8 convolution kernel (its Prepare, in TFLM's terms):
 * the conditions on @p params under which nnrt_conv2d_s8(), nnrt_depthwise_conv2d_s8()
 * (@p depthwise = 1) and their fast variants run; the kernels test the same on each
 * call, with their data pointers. The model loader calls it before it runs one.
 * @return NNRT_OK, or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_conv_s8_check(const nnrt_conv_s8_params_t *params, int depthwise);

/**
 * int8 convolution: `[N,H,W,C]` x `[OC,KH,KW,C/groups]` -> `[N,OH,OW,OC]`
 * (or `[N,PH,PW,OC]` with a fused pool).
 *
 * @param params  geometry, offsets, activation range, per-channel requantisation
 * @param input   `[N,H,W,C]` int8
 * @param filter  `[OC,KH,KW,filter_c]` int8, symmetric
 * @param bias    `[OC]` int32 or NULL
 * @param output  int8 output
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_conv2d_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                             const int8_t *filter, const int32_t *bias, int8_t *output);

/** float32 convolution; layouts and errors as nnrt_conv2d_s8(), bias `[OC]` or NULL. */
nnrt_status_t nnrt_conv2d_f32(const nnrt_conv_f32_params_t *params, const float *input,
                              const float *filter, const float *bias, float *output);

/**
 * int8 depthwise convolution: `[N,H,W,C]` x `[1,KH,KW,C*M]` -> `[N,OH,OW,C*M]`
 * (or `[N,PH,PW,C*M]` with a fused pool); `geom.filter_c` is the depth multiplier M.
 * Errors as nnrt_conv2d_s8().
 */
nnrt_status_t nnrt_depthwise_conv2d_s8(const nnrt_conv_s8_params_t *params,
                                       const int8_t *input, const int8_t *filter,
                                       const int32_t *bias, int8_t *output);

/**
 * int8 convolution with one group (`filter_c == C`) and no fused pool, without scratch:
 * the matrix core of nnrt_conv2d_im2col_s8() with its columns in the part of the
 * output not written yet (no extra memory); the last pixels, where that space runs out,
 * through the same core with their columns in at most 1 KB of stack where they fit,
 * else three channels per input word. Results identical to nnrt_conv2d_s8(), which
 * calls it for such geometries. Errors as nnrt_conv2d_1x1_s8().
 */
nnrt_status_t nnrt_conv2d_opt_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output);

/**
 * Scratch bytes nnrt_conv2d_1x1_s8() needs: 16 * ceil(C / 4) (two pixels' input
 * vectors as int16) for a valid 1x1 geometry without padding. 0 for NULL.
 */
size_t nnrt_conv2d_1x1_s8_get_buffer_size(const nnrt_conv_s8_params_t *params);

/**
 * int8 1x1 convolution, `filter_h == filter_w == 1`, `filter_c == C`, no padding, no
 * pool, any stride; results identical to nnrt_conv2d_s8().
 *
 * @param scratch  nnrt_conv2d_1x1_s8_get_buffer_size() bytes, 4-byte aligned
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, an invalid parameter or a
 *         geometry this variant does not take.
 */
nnrt_status_t nnrt_conv2d_1x1_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output,
                                 void *scratch);

/**
 * Scratch bytes nnrt_conv2d_im2col_s8() needs: 16 * ceil(K / 4) with K = KH * KW * C
 * (two pixels' input patches as int16) plus 4 * ceil(K / 4) (an int8 staging copy of
 * one patch). 0 for NULL.
 */
size_t nnrt_conv2d_im2col_s8_get_buffer_size(const nnrt_conv_s8_params_t *params);

/**
 * int8 convolution through im2col, `filter_c == C` (one group), no pool; any filter
 * size, stride, dilation and padding; results identical to nnrt_conv2d_s8().
 *
 * @param scratch  nnrt_conv2d_im2col_s8_get_buffer_size() bytes, 4-byte aligned
 * @return as nnrt_conv2d_1x1_s8().
 */
nnrt_status_t nnrt_conv2d_im2col_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                    const int8_t *filter, const int32_t *bias, int8_t *output,
                                    void *scratch);

/**
 * int8 depthwise convolution without a fused pool (`pool == NULL`) and at most 25
 * filter taps (KH * KW): the fast path of nnrt_depthwise_conv2d_s8() alone (results
 * identical), for firmware that has no use for the pooled reference loops. Errors as
 * nnrt_conv2d_1x1_s8().
 */
nnrt_status_t nnrt_depthwise_conv2d_opt_s8(const nnrt_conv_s8_params_t *params,
                                           const int8_t *input, const int8_t *filter,
                                           const int32_t *bias, int8_t *output);

/** float32 depthwise convolution; layouts and errors as nnrt_depthwise_conv2d_s8(). */
nnrt_status_t nnrt_depthwise_conv2d_f32(const nnrt_conv_f32_params_t *params,
                                        const float *input, const float *filter,
                                        const float *bias, float *output);

/**
 * int16 x int8 convolution parameters (16x8 quantisation, also used by the depthwise
 * kernel): input and output zero points 0, so no offsets; no fused pool.
 */
typedef struct {
    nnrt_conv_geom_t geom;
    int32_t act_min;            /**< fused activation lower bound, in [-32768, act_max] */
    int32_t act_max;            /**< fused activation upper bound, in [act_min, 32767] */
    int32_t per_channel;        /**< 1: multiplier/shift hold OC entries; 0: one for all */
    const int32_t *multiplier;  /**< [OC] or [1] Q31 multipliers, >= 0 */
    const int32_t *shift;       /**< [OC] or [1] shifts (> 0: left), in [-31, 7] */
} nnrt_conv_s16_params_t;

/**
 * The argument check of nnrt_conv2d_s16() and nnrt_depthwise_conv2d_s16()
 * (@p depthwise = 1) on @p params alone, for callers that check before they run.
 * @return NNRT_OK, or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_conv_s16_check(const nnrt_conv_s16_params_t *params, int depthwise);

/**
 * int16 x int8 convolution (CONV_2D with 16x8 quantisation): `[N,H,W,C]` x
 * `[OC,KH,KW,C/groups]` -> `[N,OH,OW,OC]`. Bit-exact with TFLM's 16x8 reference
 * ConvPerChannel with an int64 bias (or none): `acc = sum w * x` over the taps inside
 * the input in 64 bits, `+ bias[oc]`, nnrt_multiply_by_quantized_multiplier_s64(),
 * clamped to [act_min, act_max]. Any stride, dilation, padding and group count.
 *
 * @param bias  `[OC]` int64 or NULL
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_conv2d_s16(const nnrt_conv_s16_params_t *params, const int16_t *input,
                              const int8_t *filter, const int64_t *bias, int16_t *output);

/**
 * int16 x int8 depthwise convolution (DEPTHWISE_CONV_2D, 16x8): `[N,H,W,C]` x
 * `[1,KH,KW,C*M]` -> `[N,OH,OW,C*M]`, `geom.filter_c` the depth multiplier M; the
 * arithmetic of nnrt_conv2d_s16() (TFLM's 16x8 reference DepthwiseConvPerChannel).
 * Errors as nnrt_conv2d_s16().
 */
nnrt_status_t nnrt_depthwise_conv2d_s16(const nnrt_conv_s16_params_t *params,
                                        const int16_t *input, const int8_t *filter,
                                        const int64_t *bias, int16_t *output);

/** Geometry of a transposed convolution `[N,H,W,IC]` -> `[N,OH,OW,OC]`. */
typedef struct {
    int32_t batches;   /**< N, >= 1 */
    int32_t input_h;   /**< H, >= 1 */
    int32_t input_w;   /**< W, >= 1 */
    int32_t input_c;   /**< IC, >= 1 */
    int32_t output_h;  /**< OH, >= 1 (the output tensor's; TFLM ignores the shape operand) */
    int32_t output_w;  /**< OW, >= 1 */
    int32_t output_c;  /**< OC, >= 1 */
    int32_t filter_h;  /**< KH, >= 1 */
    int32_t filter_w;  /**< KW, >= 1 */
    int32_t stride_h;  /**< >= 1 */
    int32_t stride_w;  /**< >= 1 */
    int32_t pad_top;   /**< TFLM's padding_values.height, >= 0 */
    int32_t pad_left;  /**< TFLM's padding_values.width, >= 0 */
} nnrt_transpose_conv_geom_t;

/** int8 transposed convolution parameters. */
typedef struct {
    nnrt_transpose_conv_geom_t geom;
    int32_t input_offset;       /**< minus the input zero point, in [-127, 128] */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t act_min;            /**< activation lower bound, in [-128, act_max] */
    int32_t act_max;            /**< activation upper bound, in [act_min, 127] */
    int32_t per_channel;        /**< 1: multiplier/shift hold OC entries; 0: one for all */
    const int32_t *multiplier;  /**< [OC] or [1] Q31 multipliers */
    const int32_t *shift;       /**< [OC] or [1] shifts (> 0: left), in [-31, 30] */
} nnrt_transpose_conv_s8_params_t;

/** int16 x int8 transposed convolution parameters (input and output zero points 0). */
typedef struct {
    nnrt_transpose_conv_geom_t geom;
    int32_t act_min;            /**< activation lower bound, in [-32768, act_max] */
    int32_t act_max;            /**< activation upper bound, in [act_min, 32767] */
    int32_t per_channel;        /**< 1: multiplier/shift hold OC entries; 0: one for all */
    const int32_t *multiplier;  /**< [OC] or [1] Q31 multipliers, >= 0 */
    const int32_t *shift;       /**< [OC] or [1] shifts (> 0: left), in [-31, 7] */
} nnrt_transpose_conv_s16_params_t;

/** float32 transposed convolution parameters. */
typedef struct {
    nnrt_transpose_conv_geom_t geom;
    float act_min;  /**< activation lower bound (-FLT_MAX for none) */
    float act_max;  /**< activation upper bound (FLT_MAX for none) */
} nnrt_transpose_conv_f32_params_t;

/**
 * int8 transposed convolution (TRANSPOSE_CONV): `[N,H,W,IC]` x filter `[OC,KH,KW,IC]`
 * -> `[N,OH,OW,OC]`. Bit-exact with TFLM's reference_integer_ops::TransposeConv, which
 * scatters every input value over the outputs it reaches into an int32 buffer of the
 * whole output: input pixel (iy, ix) and filter tap (fy, fx) reach output
 * (iy * stride_h - pad_top + fy, ix * stride_w - pad_left + fx), taps outside the output
 * are dropped; `acc = sum w * (x + input_offset)`, `+ bias[oc]` (optional), then
 * per-channel requantisation, `+ output_offset`, clamped to [act_min, act_max].
 *
 * This kernel gathers instead: each output value sums the same exact int32 products
 * (integer sums do not depend on the order), so it needs no scratch (TFLM's is
 * 4 * N * OH * OW * OC bytes). Output channels in groups of three share each input
 * word (SMLAD on DSP cores). The output must not overlap the input or the weights.
 *
 * @param filter  `[OC,KH,KW,IC]` int8, symmetric
 * @param bias    `[OC]` int32 or NULL
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid parameter.
 */
nnrt_status_t nnrt_transpose_conv_s8(const nnrt_transpose_conv_s8_params_t *params,
                                     const int8_t *input, const int8_t *filter,
                                     const int32_t *bias, int8_t *output);

/**
 * Scratch bytes nnrt_transpose_conv_gemm_s8() needs: two anchors' columns,
 * NNRT_GEMM_COLS_BYTES(K) = 16 * ceil(K / 4) with K = ceil(KH / stride_h) *
 * ceil(KW / stride_w) * IC, plus OC rounded up to 4 (a sink for the pixels the padding
 * crops); 0 for NULL, an invalid geometry or a filter smaller than the stride on an
 * axis (then nnrt_transpose_conv_gemm_s8() refuses the op: run nnrt_transpose_conv_s8()).
 */
size_t nnrt_transpose_conv_gemm_s8_get_buffer_size(const nnrt_transpose_conv_s8_params_t *params);

/**
 * int8 transposed convolution on the matrix core of nnrt_conv2d_im2col_s8(): output
 * pixels split into stride_h x stride_w phases, each a plain convolution with the
 * sub-filter of the taps it reads; the input "anchor" pixels two at a time, each
 * anchor's column converted once for all phases with the same tap counts (all of
 * them when the filter is a multiple of the stride), then each such phase on the
 * 2 x 2 core (SMLAD on DSP cores). Results identical to nnrt_transpose_conv_s8().
 *
 * @param filter   the phase-major filter: for each phase (ry, rx), ry < stride_h and
 *                 rx < stride_w in row-major order, the `[OC,MH,MW,IC]` taps
 *                 fy = ry + stride_h * my < KH, fx = rx + stride_w * mx < KW of the
 *                 `[OC,KH,KW,IC]` filter, concatenated (OC * KH * KW * IC bytes, laid
 *                 out at build time: nnopt.lowering.transpose_conv.phase_major_filter)
 * @param scratch  nnrt_transpose_conv_gemm_s8_get_buffer_size() bytes, 4-byte aligned
 * @return as nnrt_transpose_conv_s8(), and NNRT_ERR_ARG for a missing scratch or a
 *         buffer size of 0.
 */
nnrt_status_t nnrt_transpose_conv_gemm_s8(const nnrt_transpose_conv_s8_params_t *params,
                                          const int8_t *input, const int8_t *filter,
                                          const int32_t *bias, int8_t *output, void *scratch);

/**
 * int16 x int8 transposed convolution (16x8 quantisation): bit-exact with TFLM's
 * 16x8 reference TransposeConv: `acc = sum x * w` in 64 bits, `+ bias[oc]` (int64,
 * optional), TFLM's 64-bit MultiplyByQuantizedMultiplier (multiplier rounded to 16
 * bits), clamped to [act_min, act_max]; zero points 0. Scalar loops, no scratch (TFLM's
 * is 8 * N * OH * OW * OC bytes). Input channels at most 511 (an int32 per-tap sum).
 * Errors as nnrt_transpose_conv_s8().
 */
nnrt_status_t nnrt_transpose_conv_s16(const nnrt_transpose_conv_s16_params_t *params,
                                      const int16_t *input, const int8_t *filter,
                                      const int64_t *bias, int16_t *output);

/**
 * float32 transposed convolution; layouts and errors as nnrt_transpose_conv_s8().
 * Bit-exact with TFLM's reference_ops::TransposeConv: each output value sums its
 * products from 0.0f in TFLM's scatter order (input row, input column, input
 * channel ascending), then adds the bias and clamps (std::max, then std::min).
 */
nnrt_status_t nnrt_transpose_conv_f32(const nnrt_transpose_conv_f32_params_t *params,
                                      const float *input, const float *filter,
                                      const float *bias, float *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_CONV_H_ */
