/**
 * @file pool.h
 * @brief Pooling and spatial reductions: MAX_POOL_2D, AVERAGE_POOL_2D, MEAN.
 *
 * Bit-exact with TensorFlow Lite Micro's reference kernels:
 * - max pool: the largest input in the window (padding never wins), then the
 *   activation clamp;
 * - average pool: the window is clipped to the input (padding is not counted), the
 *   int8 sum is divided by the number of valid taps rounding half away from zero,
 *   the float sum (accumulated in [y][x] order) is divided by the count;
 * - mean: TFLM's generic reduction (sum in int32, multiplier rescaled by the count).
 *
 * Layouts are NHWC (`[N,H,W,C]`), row-major, channels innermost. All parameters
 * (padding, activation range, multipliers) are computed at build time by
 * `nnopt.lowering.pool`. No kernel here needs scratch memory.
 */
#ifndef NNRT_KERNELS_POOL_H_
#define NNRT_KERNELS_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Geometry of a 2-D pooling window sliding over `[N,H,W,C]`. */
typedef struct {
    int32_t batches;   /**< N, >= 1 */
    int32_t input_h;   /**< H of the input, >= 1 */
    int32_t input_w;   /**< W of the input, >= 1 */
    int32_t channels;  /**< C of input and output, >= 1 */
    int32_t output_h;  /**< H of the output, >= 1 */
    int32_t output_w;  /**< W of the output, >= 1 */
    int32_t filter_h;  /**< window height, >= 1 */
    int32_t filter_w;  /**< window width, >= 1 */
    int32_t stride_h;  /**< >= 1 */
    int32_t stride_w;  /**< >= 1 */
    int32_t pad_top;   /**< rows of implicit padding above the input, >= 0 */
    int32_t pad_left;  /**< columns of implicit padding left of the input, >= 0 */
} nnrt_pool_geom_t;

/**
 * Check a pooling geometry: positive extents and strides, non-negative padding, and
 * every output window overlapping the input (TFLM fails on an empty window).
 * Shared by the pooling kernels; cheap (O(1)).
 */
static inline int nnrt_pool_geom_valid(const nnrt_pool_geom_t *g)
{
    if (g->batches < 1 || g->input_h < 1 || g->input_w < 1 || g->channels < 1
        || g->output_h < 1 || g->output_w < 1 || g->filter_h < 1 || g->filter_w < 1
        || g->stride_h < 1 || g->stride_w < 1 || g->pad_top < 0 || g->pad_left < 0) {
        return 0;
    }
    /* The first and last windows of each axis must reach into the input. */
    if (g->filter_h - g->pad_top <= 0 || g->filter_w - g->pad_left <= 0) {
        return 0;
    }
    if ((int64_t)(g->output_h - 1) * g->stride_h - g->pad_top >= g->input_h
        || (int64_t)(g->output_w - 1) * g->stride_w - g->pad_left >= g->input_w) {
        return 0;
    }
    return 1;
}

/** int8 pooling: geometry and activation range (input and output share quantisation). */
typedef struct {
    nnrt_pool_geom_t geom;
    int32_t act_min;   /**< fused activation lower bound, in [-128, act_max] */
    int32_t act_max;   /**< fused activation upper bound, in [act_min, 127] */
} nnrt_pool_s8_params_t;

/** float32 pooling: geometry and activation range. */
typedef struct {
    nnrt_pool_geom_t geom;
    float act_min;     /**< fused activation lower bound (-FLT_MAX for none) */
    float act_max;     /**< fused activation upper bound (FLT_MAX for none) */
} nnrt_pool_f32_params_t;

/*
 * Argument checks (the kernels' Prepare, in TFLM's terms): the conditions on the
 * parameters under which the pooling kernels run. The kernels test the same macro on
 * every call, with their data pointers; the model loader calls nnrt_pool_*_check()
 * before it runs one (NNRT_OK or NNRT_ERR_ARG).
 */

/** 1 unless a valid geometry and an int8 activation range (int8 max/average pool). */
#define NNRT_POOL_S8_PARAMS_BAD(params)                                                     \
    (!nnrt_pool_geom_valid(&(params)->geom) || (params)->act_min > (params)->act_max      \
     || (params)->act_min < INT8_MIN || (params)->act_max > INT8_MAX)

/** 1 unless a valid geometry and an int16 activation range (int16 max/average pool,
 *  which take the int8 parameter struct). */
#define NNRT_POOL_S16_PARAMS_BAD(params)                                                    \
    (!nnrt_pool_geom_valid(&(params)->geom) || (params)->act_min > (params)->act_max      \
     || (params)->act_min < INT16_MIN || (params)->act_max > INT16_MAX)

/** The int16 pools' check (kernels/pool/nnrt_pool_s16_check.c). */
nnrt_status_t nnrt_pool_s16_check(const nnrt_pool_s8_params_t *params);

/** The int8 pools' check (kernels/pool/nnrt_pool_s8_check.c). */
nnrt_status_t nnrt_pool_s8_check(const nnrt_pool_s8_params_t *params);

/** 1 unless a valid geometry (float32 max/average/L2 pool). */
#define NNRT_POOL_F32_PARAMS_BAD(params) (!nnrt_pool_geom_valid(&(params)->geom))

/** The float32 pools' check (kernels/pool/nnrt_pool_f32_check.c). */
nnrt_status_t nnrt_pool_f32_check(const nnrt_pool_f32_params_t *params);

/**
 * int8 max pool, `[N,H,W,C]` -> `[N,OH,OW,C]`.
 *
 * In place (output == input) is safe when pad_top == pad_left == 0: every output
 * element is written at an offset no larger than the first input it reads, and
 * later outputs only read at larger offsets.
 *
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer or an invalid geometry
 *         (including a window that covers no input element).
 */
nnrt_status_t nnrt_maxpool2d_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                                int8_t *output);

/** int8 average pool; same layout, in-place rule and errors as nnrt_maxpool2d_s8(). */
nnrt_status_t nnrt_avgpool2d_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                                int8_t *output);

/** int16 max / average pool (TFLM's int16 pooling): the int8 parameter struct with an
 *  int16 activation range; same layout, in-place rule and errors as nnrt_maxpool2d_s8(). */
nnrt_status_t nnrt_maxpool2d_s16(const nnrt_pool_s8_params_t *params, const int16_t *input,
                                 int16_t *output);
nnrt_status_t nnrt_avgpool2d_s16(const nnrt_pool_s8_params_t *params, const int16_t *input,
                                 int16_t *output);

/** float32 max pool; same layout, in-place rule and errors as nnrt_maxpool2d_s8(). */
nnrt_status_t nnrt_maxpool2d_f32(const nnrt_pool_f32_params_t *params, const float *input,
                                 float *output);

/** float32 average pool; same layout, in-place rule and errors as nnrt_maxpool2d_s8(). */
nnrt_status_t nnrt_avgpool2d_f32(const nnrt_pool_f32_params_t *params, const float *input,
                                 float *output);

/**
 * Global average pool in row bands (the row-range entry of a feature map in storage,
 * issue 39): `params` is the whole op's (one output pixel per batch, batches == 1,
 * its window holding the whole input: output_h == output_w == 1, pad_top ==
 * pad_left == 0), `rows` holds input rows [row0, row0 + nrows) (whole rows, NHWC).
 * The band starting at row 0 sets the per-channel partial sums `acc` (`channels`
 * entries) to 0; each band adds its taps in the window's [y][x] order, channel by
 * channel, as the whole kernel does; the band ending at the last row writes the
 * output (sum / taps, clamped). Call the bands in row order: the float32 sums are
 * then TFLM's exactly.
 * @return NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, another geometry or rows outside
 *         the input.
 */
nnrt_status_t nnrt_avgpool2d_rows_f32(const nnrt_pool_f32_params_t *params, const float *rows,
                                      int32_t row0, int32_t nrows, float *acc, float *output);

/** int8 global average pool in row bands: as nnrt_avgpool2d_rows_f32() with int32
 *  partial sums, the mean rounded half away from zero as nnrt_avgpool2d_s8(). */
nnrt_status_t nnrt_avgpool2d_rows_s8(const nnrt_pool_s8_params_t *params, const int8_t *rows,
                                     int32_t row0, int32_t nrows, int32_t *acc, int8_t *output);

/**
 * float32 L2 pool (L2_POOL_2D; TFLM has no quantised one): sqrt of the mean of the
 * squares over each clipped window. Layout and errors as nnrt_maxpool2d_s8(); not in
 * place.
 */
nnrt_status_t nnrt_l2pool2d_f32(const nnrt_pool_f32_params_t *params, const float *input,
                                float *output);

/** Maximum rank a MEAN descriptor handles after merging adjacent dimensions. */
#define NNRT_MEAN_MAX_DIMS NNRT_MAX_DIMS

/**
 * MEAN over any set of axes, as two strided index spaces of the input.
 *
 * The output is the row-major walk over the kept dimensions `outer_dims`; each output
 * element averages the input elements of the reduced index space `reduce_dims`, visited
 * in increasing input address order (the order TFLM accumulates floats in). Strides are
 * in elements of the input. Built by `nnopt.lowering.pool` from the input shape and the
 * axes (adjacent dimensions merged).
 */
typedef struct {
    int32_t outer_rank;                           /**< 1..NNRT_MEAN_MAX_DIMS */
    int32_t outer_dims[NNRT_MEAN_MAX_DIMS];       /**< kept extents, >= 1 */
    int32_t outer_strides[NNRT_MEAN_MAX_DIMS];    /**< input stride of each kept dim */
    int32_t reduce_rank;                          /**< 1..NNRT_MEAN_MAX_DIMS */
    int32_t reduce_dims[NNRT_MEAN_MAX_DIMS];      /**< reduced extents, >= 1 */
    int32_t reduce_strides[NNRT_MEAN_MAX_DIMS];   /**< input stride of each reduced dim */
} nnrt_mean_geom_t;

/** int8 MEAN: geometry plus TFLM's requantisation (input and output quant may differ). */
typedef struct {
    nnrt_mean_geom_t geom;
    int32_t input_zero_point;   /**< in [-128, 127] */
    int32_t output_zero_point;  /**< in [-128, 127] */
    int32_t multiplier;         /**< Q31 multiplier of in_scale/out_scale, already divided by
                                     the element count as TFLM does */
    int32_t shift;              /**< matching shift (negative = right) */
    int32_t count;              /**< number of reduced elements, >= 1 */
} nnrt_mean_s8_params_t;

/**
 * int8 MEAN. The result is clamped to [-128, 127] (MEAN has no fused activation).
 * Not in-place capable (output may be smaller than input but is read-after-write unsafe
 * in general). @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_mean_s8(const nnrt_mean_s8_params_t *params, const int8_t *input,
                           int8_t *output);

/** int8 MEAN over the rows and columns of a batch-1 `[1,H,W,C]` input, in row bands
 *  (nnrt_mean_rows_s8()): the window of `geom` holds the whole input (as
 *  nnrt_avgpool2d_rows_f32()'s); act_min/act_max are the int8 clamp (-128, 127); the
 *  requantisation fields are nnrt_mean_s8_params_t's. */
typedef struct {
    nnrt_pool_geom_t geom;
    int32_t act_min;            /**< -128 */
    int32_t act_max;            /**< 127 */
    int32_t input_zero_point;   /**< in [-128, 127] */
    int32_t output_zero_point;  /**< in [-128, 127] */
    int32_t multiplier;         /**< Q31 multiplier of in_scale/out_scale divided by H*W */
    int32_t shift;              /**< matching shift (negative = right), in [-31, 31] */
} nnrt_mean_rows_s8_params_t;

/**
 * MEAN over axes 1 and 2 in row bands (the row-range entry of a feature map in storage,
 * issue 39), as nnrt_avgpool2d_rows_f32(): `rows` holds input rows [row0, row0 + nrows),
 * the band starting at row 0 zeroes the per-channel sums `acc`, each band adds its
 * pixels in address order (nnrt_mean_s8()'s and nnrt_mean_f32()'s order), the band
 * ending at the last row writes the output: int8 requantised as nnrt_mean_s8(), float32
 * the sum divided by H*W as nnrt_mean_f32() (no clamp; `params`' activation range is
 * not used). @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_mean_rows_s8(const nnrt_mean_rows_s8_params_t *params, const int8_t *rows,
                                int32_t row0, int32_t nrows, int32_t *acc, int8_t *output);
nnrt_status_t nnrt_mean_rows_f32(const nnrt_pool_f32_params_t *params, const float *rows,
                                 int32_t row0, int32_t nrows, float *acc, float *output);

/** int16 MEAN / SUM: the fields of nnrt_mean_s8_params_t over int16 tensors. */
typedef struct {
    nnrt_mean_geom_t geom;
    int32_t input_zero_point;   /**< in [-32768, 32767] */
    int32_t output_zero_point;  /**< in [-32768, 32767] */
    int32_t multiplier;         /**< Q31 multiplier of in_scale/out_scale (MEAN: divided by
                                     the element count as TFLM does) */
    int32_t shift;              /**< matching shift (negative = right), in [-31, 31] */
    int32_t count;              /**< number of reduced elements, in [1, 32767] */
} nnrt_mean_s16_params_t;

/**
 * int16 MEAN (and SUM, whose multiplier is not divided by the count): TFLM's
 * QuantizedMeanOrSum for int16, clamped to [-32768, 32767]. @return NNRT_OK or
 * NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_mean_s16(const nnrt_mean_s16_params_t *params, const int16_t *input,
                            int16_t *output);

/** float32 MEAN: the sum of the reduced elements divided by their count (as float). */
nnrt_status_t nnrt_mean_f32(const nnrt_mean_geom_t *geom, const float *input, float *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_POOL_H_ */
