/* DEQUANTIZE int8 -> float32 (TFLM reference_ops::Dequantize). */
#include "nnrt/kernels/quantize.h"

nnrt_status_t nnrt_dequantize_s8_f32(const nnrt_affine_params_t *params,
                                     const int8_t *input, float *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->zero_point < INT8_MIN || params->zero_point > INT8_MAX) {
        return NNRT_ERR_ARG;
    }
    const float scale = params->scale;
    const int32_t zp = params->zero_point;
    /* TFLM computes (float)((double)scale * (q - zp)). The double product of a float
     * and a small integer is exact, so one float multiply rounds to the same value and
     * needs no double-precision FPU. Backward: float32 output in place over the
     * narrower input. */
    for (int32_t i = size - 1; i >= 0; --i) {
        output[i] = scale * (float)((int32_t)input[i] - zp);
    }
    return NNRT_OK;
}
