/* HARD_SWISH float32 (TFLM reference_ops::HardSwish<float>). */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_hard_swish_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float v = input[i];
        const float shifted = v + 3.0f;
        const float lower = 0.0f < shifted ? shifted : 0.0f; /* max(0, v + 3) */
        const float relu6 = lower < 6.0f ? lower : 6.0f;     /* min(6, .) */
        output[i] = v * relu6 / 6.0f;
    }
    return NNRT_OK;
}
