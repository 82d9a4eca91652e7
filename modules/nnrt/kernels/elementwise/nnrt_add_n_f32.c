/*
 * float32 ADD_N, TFLM's reference AddN: out[i] = ((0 + in0[i]) + in1[i]) + ... in input
 * order. All inputs have the output's shape. Element i is read from every input before
 * it is written: in place over any input.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_add_n_f32(const float *const *inputs, int32_t num_inputs, float *output,
                             int32_t size)
{
    if (inputs == NULL || output == NULL || num_inputs < 1 || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t j = 0; j < num_inputs; ++j) {
        if (inputs[j] == NULL) {
            return NNRT_ERR_ARG;
        }
    }
    for (int32_t i = 0; i < size; ++i) {
        float x = 0.0f;
        for (int32_t j = 0; j < num_inputs; ++j) {
            x += inputs[j][i];
        }
        output[i] = x;
    }
    return NNRT_OK;
}
