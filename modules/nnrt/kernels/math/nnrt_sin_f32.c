/*
 * float32 SIN, TFLM's elementwise Sin (std::sin on float). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_sin_f32(const float *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const float x = input[i];
        output[i] = sinf(x);
    }
    return NNRT_OK;
}
