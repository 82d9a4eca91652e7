/* LOGISTIC float32 (TFLM reference_ops::Logistic, with its cutoffs). */
#include <math.h>

#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_logistic_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    const float cutoff_upper = 16.619047164916992188f;
    const float cutoff_lower = -9.0f;
    for (int32_t i = 0; i < size; ++i) {
        const float v = input[i];
        float r;
        if (v > cutoff_upper) {
            r = 1.0f;
        } else if (v < cutoff_lower) {
            r = expf(v);
        } else {
            r = 1.0f / (1.0f + expf(-v));
        }
        output[i] = r;
    }
    return NNRT_OK;
}
