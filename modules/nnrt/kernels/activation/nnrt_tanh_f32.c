/* TANH float32 (TFLM reference_ops::Tanh). */
#include <math.h>

#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_tanh_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = tanhf(input[i]);
    }
    return NNRT_OK;
}
