/* QUANTIZE float32 -> int16 (TFLM reference_ops::AffineQuantize). */
#include <math.h>

#include "nnrt/kernels/quantize.h"

nnrt_status_t nnrt_quantize_f32_s16(const nnrt_affine_params_t *params, const float *input,
                                    int16_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        !(params->scale > 0.0f) || params->zero_point < INT16_MIN ||
        params->zero_point > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    const float scale = params->scale;
    const float zp = (float)params->zero_point;
    /* int16 in place over float32: output element i lies below input element i + 1 */
    for (int32_t i = 0; i < size; ++i) {
        const float r = roundf(input[i] / scale); /* half away from zero, like TFLM */
        float q = r + zp; /* exact: |r| <= 2^24 here or clamped anyway */
        if (!(r == r)) {
            q = zp; /* NaN */
        }
        output[i] = (int16_t)(q > 32767.0f ? 32767 : (q < -32768.0f ? -32768 : (int32_t)q));
    }
    return NNRT_OK;
}
