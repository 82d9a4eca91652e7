/* QUANTIZE float32 -> int8 (TFLM reference_ops::AffineQuantize). */
#include <math.h>

#include "nnrt/kernels/quantize.h"

nnrt_status_t nnrt_quantize_f32_s8(const nnrt_affine_params_t *params, const float *input,
                                   int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        !(params->scale > 0.0f) || params->zero_point < INT8_MIN ||
        params->zero_point > INT8_MAX) {
        return NNRT_ERR_ARG;
    }
    const float scale = params->scale;
    const float zp = (float)params->zero_point;
    /* int8 in place over float32: output byte i lies below input element i + 1 */
    for (int32_t i = 0; i < size; ++i) {
        const float r = roundf(input[i] / scale); /* half away from zero, like TFLM */
        float q = r + zp; /* exact: |r| <= 2^24 here or clamped anyway */
        if (!(r == r)) {
            q = zp; /* NaN */
        }
        output[i] = (int8_t)(q > 127.0f ? 127 : (q < -128.0f ? -128 : (int32_t)q));
    }
    return NNRT_OK;
}
