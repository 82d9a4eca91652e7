/* EXP float32 (TFLM reference: element-wise expf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_exp_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float x = input[i];
        output[i] = expf(x);
    }
    return NNRT_OK;
}
