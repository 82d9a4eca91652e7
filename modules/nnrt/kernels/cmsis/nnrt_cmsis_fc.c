/*
 * CMSIS-NN glue for FULLY_CONNECTED (see nnrt_cmsis.h); compiled to nothing without
 * NNRT_USE_CMSIS_NN.
 *
 * As TFLM's tensorflow/lite/micro/kernels/cmsis_nn/fully_connected.cc: input offset =
 * minus the input zero point, output offset = output zero point, filter offset 0 (FC
 * weights with a zero point stay on nnrt's path), input [batches, accum_depth], filter
 * dims {n = accum_depth, c = output_depth}. arm_fully_connected_wrapper_s8() picks the
 * per-tensor or the per-channel kernel.
 */
#include "nnrt_cmsis.h"

#if NNRT_CMSIS_NN_ENABLED

#include <stdint.h>

#include "arm_nnfunctions.h"

int nnrt_cmsis_fully_connected_s8(const nnrt_fc_s8_params_t *params, const int8_t *input,
                                  const int8_t *weights, const int32_t *bias,
                                  int8_t *output)
{
    if (params->weights_offset != 0) {
        return 0;
    }
    const cmsis_nn_dims input_dims = {.n = params->batches, .h = 1, .w = 1,
                                      .c = params->accum_depth};
    const cmsis_nn_dims filter_dims = {.n = params->accum_depth, .h = 1, .w = 1,
                                       .c = params->output_depth};
    const cmsis_nn_dims bias_dims = {.n = 1, .h = 1, .w = 1, .c = params->output_depth};
    const cmsis_nn_dims output_dims = {.n = params->batches, .h = 1, .w = 1,
                                       .c = params->output_depth};
    /* no nnrt FC kernel takes scratch (Helium's kernel sums would need a buffer) */
    if (arm_fully_connected_s8_get_buffer_size(&filter_dims) != 0) {
        return 0;
    }
    const cmsis_nn_fc_params fp = {
        .input_offset = params->input_offset,
        .filter_offset = 0,
        .output_offset = params->output_offset,
        .activation = {.min = params->act_min, .max = params->act_max},
    };
    /* CMSIS-NN reads these arrays only; its struct has no const. */
    const cmsis_nn_quant_params quant = {
        .multiplier = (int32_t *)(uintptr_t)params->multiplier,
        .shift = (int32_t *)(uintptr_t)params->shift,
        .is_per_channel = params->per_channel ? 1 : 0,
    };
    const cmsis_nn_context ctx = {.buf = NULL, .size = 0};
    return arm_fully_connected_wrapper_s8(&ctx, &fp, &quant, &input_dims, input,
                                          &filter_dims, weights, &bias_dims, bias,
                                          &output_dims, output)
           == ARM_CMSIS_NN_SUCCESS;
}

#else
typedef int nnrt_cmsis_fc_unused_t; /* ISO C: no empty translation unit */
#endif /* NNRT_CMSIS_NN_ENABLED */
