/**
 * @file fc_depth.h
 * @brief Fully connected layers in slices along the input depth (issue 39): the
 *        kernels a model calls when the weight rows of a layer exceed the staging
 *        buffers of the weight stream (nnopt.swap), its partial sums kept in an
 *        accumulator between the slices.
 */
#ifndef NNRT_KERNELS_FC_DEPTH_H_
#define NNRT_KERNELS_FC_DEPTH_H_

#include <stdint.h>

#include "nnrt/kernels/fc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** flags of the depth-sliced kernels: the slice starts the sum / ends it. */
#define NNRT_FC_DEPTH_FIRST 1u
#define NNRT_FC_DEPTH_LAST 2u

/**
 * One slice of a fully connected layer along its input depth (a layer whose weight
 * rows exceed the staging buffers streams in such slices, nnopt.swap): for the
 * `output_depth` units of @p params (a block of output channels, batches 1),
 * `acc[o] += sum over d in [k0, k1) of input[d] * weights[o * (k1 - k0) + d - k0]`
 * (int8: `(input[d] + input_offset) * (weights[...] + weights_offset)` into int32),
 * the products added in input order. NNRT_FC_DEPTH_FIRST: @p acc starts at the bias
 * (int8) or 0 (float32); NNRT_FC_DEPTH_LAST: then `output[o]` is written from it as
 * the whole-depth kernel writes it (float32: acc + bias, clamped; int8: requantised).
 * Slices [0, k1), [k1, k2) ... [kn, accum_depth) in turn give the whole-depth kernel's
 * output exactly: int8's int32 sums are exact, and float32's running sum sees the
 * same additions in the same order (TFLM's reference: one accumulator in input
 * order, then the bias). NNRT_ERR_ARG for NULL pointers, batches != 1, or a slice
 * outside [0, accum_depth).
 */
nnrt_status_t nnrt_fully_connected_s8_depth(const nnrt_fc_s8_params_t *params,
                                            const int8_t *input, const int8_t *weights,
                                            const int32_t *bias, int8_t *output, int32_t *acc,
                                            int32_t k0, int32_t k1, uint32_t flags);
/** float32 slice along the depth; as nnrt_fully_connected_s8_depth(). */
nnrt_status_t nnrt_fully_connected_f32_depth(const nnrt_fc_f32_params_t *params,
                                             const float *input, const float *weights,
                                             const float *bias, float *output, float *acc,
                                             int32_t k0, int32_t k1, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_FC_DEPTH_H_ */
