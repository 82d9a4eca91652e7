/*
 * CMSIS-NN glue for int8 ADD (see nnrt_cmsis.h; SOFTMAX's is nnrt_cmsis_softmax.c);
 * compiled to nothing without NNRT_USE_CMSIS_NN.
 *
 * ADD: arm_elementwise_add_s8() takes TFLM's parameters as nnrt stores them (input
 * offsets = minus zero points, left shift 20, per-input and output multipliers with
 * shifts <= 0, output offset = zero point, activation range). It has no broadcasting;
 * like TFLM's tensorflow/lite/micro/kernels/cmsis_nn/add.cc, broadcast shapes keep the
 * portable path. Element i is written after inputs i are read, so output == input
 * (nnrt's in-place ADD) is safe.
 */
#include "nnrt_cmsis.h"

#if NNRT_CMSIS_NN_ENABLED

#include <stddef.h>
#include <stdint.h>

#include "arm_nnfunctions.h"

/* Elements of a broadcast walk when both inputs are dense row-major copies of the
 * output shape (no broadcasting), else 0. */
static int32_t dense_elements(const nnrt_broadcast_t *b)
{
    int64_t stride = 1;
    for (int32_t d = b->rank - 1; d >= 0; --d) {
        if (b->dims[d] > 1 && (b->stride1[d] != stride || b->stride2[d] != stride)) {
            return 0;
        }
        stride *= b->dims[d];
        if (stride > INT32_MAX) {
            return 0;
        }
    }
    return (int32_t)stride;
}

int nnrt_cmsis_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                      const int8_t *input2, int8_t *output)
{
    const int32_t n = dense_elements(&params->bcast);
    if (n == 0) {
        return 0;
    }
    return arm_elementwise_add_s8(input1, input2, params->input1_offset,
                                  params->input1_multiplier, params->input1_shift,
                                  params->input2_offset, params->input2_multiplier,
                                  params->input2_shift, params->left_shift, output,
                                  params->output_offset, params->output_multiplier,
                                  params->output_shift, params->act_min, params->act_max, n)
           == ARM_CMSIS_NN_SUCCESS;
}

#else
typedef int nnrt_cmsis_elementwise_unused_t; /* ISO C: no empty translation unit */
#endif /* NNRT_CMSIS_NN_ENABLED */
