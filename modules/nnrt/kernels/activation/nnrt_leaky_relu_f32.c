/* LEAKY_RELU float32 (TFLM reference LeakyRelu). */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_leaky_relu_f32(float alpha, const float *input, float *output,
                                  int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float v = input[i];
        /* alpha may be > 1 or < 0: not a max(). */
        output[i] = v > 0.0f ? v : v * alpha;
    }
    return NNRT_OK;
}
