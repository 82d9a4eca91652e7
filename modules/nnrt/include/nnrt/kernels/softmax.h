/**
 * @file softmax.h
 * @brief SOFTMAX over the last axis, int8 -> int8, int8 -> int16 and float32,
 *        bit-exact with TensorFlow Lite Micro's reference kernels.
 *
 * The input is @p rows rows of @p depth elements (depth = the last dimension, rows =
 * the product of the others), contiguous. Each row is normalised on its own.
 *
 * Quantised softmax (TFLM reference_ops::Softmax<int8_t, OutputT>): the difference of
 * each input to its row maximum is rescaled by beta * input_scale into Q5.26,
 * exponentiated in fixed point (fixedpoint.h), summed in Q12.19 and multiplied by the
 * fixed-point reciprocal of the sum. Differences below @c diff_min contribute nothing
 * and output the minimum. The output quantisation is fixed by TFLM: int8 scale 1/256
 * zero point -128; int16 scale 1/65536 zero point -32768.
 *
 * Arguments, as in every nnrt kernel: configuration (params struct or scalars) first,
 * then input, output, then the extents.
 *
 * @p output may equal @p input (each element is read before it is written); other
 * overlap is not supported. No scratch memory; the quantised kernels keep a 1 KB
 * table of the 256 possible exps on the stack and fill it when the softmax has more
 * than 128 elements (each exp then computed once, not twice per element).
 *
 * Status: NNRT_OK, or NNRT_ERR_ARG for a NULL pointer, a negative @p rows, a @p depth
 * < 1 or a parameter out of range (nothing is written then).
 */
#ifndef NNRT_KERNELS_SOFTMAX_H_
#define NNRT_KERNELS_SOFTMAX_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of the quantised softmax (TFLM's PreprocessSoftmaxScaling). */
typedef struct {
    int32_t input_multiplier; /**< min(beta * in_scale * 2^26, 2^31 - 1), Q31 mantissa */
    int32_t input_left_shift; /**< its power of two, [0, 31] */
    int32_t diff_min;         /**< <= 0: smaller (in - row max) give exp = 0 */
} nnrt_softmax_s8_params_t;

/**
 * int8 -> int8 softmax.
 * @param input  [rows, depth] int8
 * @param output [rows, depth] int8 (scale 1/256, zero point -128), may equal @p input
 * @param rows   >= 0
 * @param depth  >= 1
 */
nnrt_status_t nnrt_softmax_s8(const nnrt_softmax_s8_params_t *params, const int8_t *input,
                              int8_t *output, int32_t rows, int32_t depth);

/**
 * int8 -> int16 softmax (output scale 1/65536, zero point -32768). Same parameters.
 * @p output must not overlap @p input (the element sizes differ).
 */
nnrt_status_t nnrt_softmax_s8_s16(const nnrt_softmax_s8_params_t *params,
                                  const int8_t *input, int16_t *output, int32_t rows,
                                  int32_t depth);

/**
 * float32 softmax: exp((x - row max) * beta) / sum, in single precision with expf().
 * @param beta any finite value (TFLite's SoftmaxOptions.beta)
 */
nnrt_status_t nnrt_softmax_f32(float beta, const float *input, float *output, int32_t rows,
                               int32_t depth);

/*
 * Argument checks (the kernels' Prepare, in TFLM's terms): the conditions on the
 * parameters under which the softmax kernels run, which they also test on every call.
 * The model loader calls them before it runs a kernel. NNRT_OK or NNRT_ERR_ARG.
 */

/** 1 unless rows >= 0, depth >= 1, the left shift in [0, 31] and diff_min <= 0: the
 *  condition of nnrt_softmax_s8_check() and of the quantised kernels' guards. */
#define NNRT_SOFTMAX_S8_ARGS_BAD(params, rows, depth)                                       \
    ((rows) < 0 || (depth) < 1 || (params)->input_left_shift < 0                           \
     || (params)->input_left_shift > 31 || (params)->diff_min > 0)

/** 1 unless rows >= 0 and depth >= 1 (float32 softmax and its check). */
#define NNRT_SOFTMAX_F32_ARGS_BAD(rows, depth) ((rows) < 0 || (depth) < 1)

/** Quantised softmax (both outputs): params set, rows >= 0, depth >= 1, the left
 *  shift in [0, 31], diff_min <= 0. */
nnrt_status_t nnrt_softmax_s8_check(const nnrt_softmax_s8_params_t *params, int32_t rows,
                                    int32_t depth);

/** float32 softmax: rows >= 0, depth >= 1. */
nnrt_status_t nnrt_softmax_f32_check(int32_t rows, int32_t depth);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_SOFTMAX_H_ */
