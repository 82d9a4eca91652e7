/*
 * CMSIS-NN glue for int8 SOFTMAX (see nnrt_cmsis.h); compiled to nothing without
 * NNRT_USE_CMSIS_NN.
 *
 * arm_softmax_s8() with TFLM's (input multiplier, left shift, diff_min), as
 * tensorflow/lite/micro/kernels/cmsis_nn/softmax.cc calls it.
 */
#include "nnrt_cmsis.h"

#if NNRT_CMSIS_NN_ENABLED

#include <stdint.h>

#include "arm_nnfunctions.h"

int nnrt_cmsis_softmax_s8(const nnrt_softmax_s8_params_t *params, const int8_t *input,
                          int8_t *output, int32_t rows, int32_t depth)
{
    arm_softmax_s8(input, rows, depth, params->input_multiplier, params->input_left_shift,
                   params->diff_min, output);
    return 1;
}

#else
typedef int nnrt_cmsis_softmax_unused_t; /* ISO C: no empty translation unit */
#endif /* NNRT_CMSIS_NN_ENABLED */
