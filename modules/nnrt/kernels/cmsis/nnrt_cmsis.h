/*
 * Internal to the nnrt kernels: the optional CMSIS-NN path (issue 9; Kconfig
 * CONFIG_NNRT_CMSIS_NN defines NNRT_USE_CMSIS_NN=1 for the nnrt library).
 *
 * Each public int8 kernel that has a CMSIS-NN equivalent calls one of these functions
 * after its own argument checks:
 *
 *     #if NNRT_CMSIS_NN_ENABLED
 *         if (nnrt_cmsis_conv_s8(params, input, filter, bias, output, scratch, bytes)) {
 *             return NNRT_OK;
 *         }
 *     #endif
 *
 * A function returns 1 when CMSIS-NN computed the whole output (ARM_CMSIS_NN_SUCCESS,
 * the only CMSIS-NN status that maps to an nnrt status: NNRT_OK), and 0 when it
 * declines, having written nothing: then the nnrt kernel runs its own code. It declines
 * every case TFLM's CMSIS-NN kernels (tflite-micro tensorflow/lite/micro/kernels/
 * cmsis_nn/) would not send to CMSIS-NN or that nnrt's API allows and CMSIS-NN does
 * not (per-tensor conv requantisation, fused max pool, grouped conv, broadcast ADD,
 * overlapping pool input/output, FC weights with a zero point, extents CMSIS-NN keeps
 * in 16 bits), and any call whose CMSIS-NN buffer (its *_get_buffer_size()) is larger
 * than the scratch the nnrt API guarantees that kernel: nnrt_conv2d_1x1_s8() and
 * nnrt_conv2d_im2col_s8() their own *_get_buffer_size() bytes, every other kernel none
 * (the average pool a small stack buffer). CMSIS-NN therefore never needs memory the
 * nnopt plan did not reserve, whatever the plan, and a plan is the same with and
 * without CMSIS-NN. A CMSIS-NN argument error (its checks run before it writes
 * anything) also declines.
 *
 * Without NNRT_USE_CMSIS_NN (the default) nothing here is declared and the glue files
 * (kernels/cmsis/) compile to nothing.
 */
#ifndef NNRT_KERNELS_CMSIS_NNRT_CMSIS_H_
#define NNRT_KERNELS_CMSIS_NNRT_CMSIS_H_

#if defined(NNRT_USE_CMSIS_NN) && NNRT_USE_CMSIS_NN
#define NNRT_CMSIS_NN_ENABLED 1
#else
#define NNRT_CMSIS_NN_ENABLED 0
#endif

#if NNRT_CMSIS_NN_ENABLED

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/pool.h"
#include "nnrt/kernels/softmax.h"

/** CONV_2D through arm_convolve_wrapper_s8() with @p scratch_bytes of 4-byte aligned
 *  @p scratch (NULL and 0 for none). Valid nnrt arguments assumed. */
int nnrt_cmsis_conv_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                       const int8_t *filter, const int32_t *bias, int8_t *output,
                       void *scratch, size_t scratch_bytes);

/** DEPTHWISE_CONV_2D through arm_depthwise_conv_wrapper_s8(), without a buffer. */
int nnrt_cmsis_depthwise_conv_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                                 const int8_t *filter, const int32_t *bias, int8_t *output);

/** FULLY_CONNECTED through arm_fully_connected_wrapper_s8(), without a buffer. */
int nnrt_cmsis_fully_connected_s8(const nnrt_fc_s8_params_t *params, const int8_t *input,
                                  const int8_t *weights, const int32_t *bias,
                                  int8_t *output);

/** MAX_POOL_2D through arm_max_pool_s8(). */
int nnrt_cmsis_maxpool_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                          int8_t *output);

/** AVERAGE_POOL_2D through arm_avgpool_s8(), its buffer on the stack when it is at most
 *  NNRT_CMSIS_AVGPOOL_STACK_BYTES. */
int nnrt_cmsis_avgpool_s8(const nnrt_pool_s8_params_t *params, const int8_t *input,
                          int8_t *output);

/** ADD without broadcasting through arm_elementwise_add_s8(). */
int nnrt_cmsis_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                      const int8_t *input2, int8_t *output);

/** int8 -> int8 SOFTMAX through arm_softmax_s8(). */
int nnrt_cmsis_softmax_s8(const nnrt_softmax_s8_params_t *params, const int8_t *input,
                          int8_t *output, int32_t rows, int32_t depth);

/** Largest arm_avgpool_s8() buffer (4 bytes per channel on DSP cores) kept on the stack. */
#define NNRT_CMSIS_AVGPOOL_STACK_BYTES 256

/** Largest extent CMSIS-NN's kernels keep without truncation (some in uint16_t). */
#define NNRT_CMSIS_MAX_EXTENT 32767

#endif /* NNRT_CMSIS_NN_ENABLED */

#endif /* NNRT_KERNELS_CMSIS_NNRT_CMSIS_H_ */
