/* RELU6 int8 (TFLM reference Relu6Quantized), and RELU int8 without requantisation. */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_clamp_s8(int32_t lo, int32_t hi, const int8_t *input, int8_t *output,
                            int32_t size)
{
    if (input == NULL || output == NULL || NNRT_CLAMP_S8_ARGS_BAD(lo, hi, size)) {
        return NNRT_ERR_ARG;
    }
    const int8_t lo8 = (int8_t)lo;
    const int8_t hi8 = (int8_t)hi;
    for (int32_t i = 0; i < size; ++i) {
        const int8_t v = input[i];
        output[i] = v > hi8 ? hi8 : (v < lo8 ? lo8 : v);
    }
    return NNRT_OK;
}
