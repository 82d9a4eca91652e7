/* RSQRT float32 (TFLM reference: element-wise 1.0f / sqrtf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_rsqrt_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float x = input[i];
        output[i] = 1.0f / sqrtf(x);
    }
    return NNRT_OK;
}
