/* RELU float32 (TFLM ReluFloat). */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_relu_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float v = input[i];
        output[i] = v < 0.0f ? 0.0f : v;
    }
    return NNRT_OK;
}
