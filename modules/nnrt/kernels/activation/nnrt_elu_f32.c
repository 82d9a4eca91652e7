/*
 * float32 ELU, TFLM's reference Elu: out = x < 0 ? expm1f(x) : x (TfLiteExpm1 is
 * std::expm1 on float). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_elu_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float x = input[i];
        output[i] = x < 0.0f ? expm1f(x) : x;
    }
    return NNRT_OK;
}
