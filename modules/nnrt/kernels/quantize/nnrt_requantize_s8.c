/* QUANTIZE int8 -> int8 (TFLM reference_ops::Requantize<int8_t, int8_t>). */
#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/quantize.h"

nnrt_status_t nnrt_requantize_s8(const nnrt_requantize_params_t *params,
                                 const int8_t *input, int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->multiplier < 0 || params->shift < -31 || params->shift > 30) {
        return NNRT_ERR_ARG;
    }
    const int32_t in_zp = params->input_zero_point;
    const int32_t out_zp = params->output_zero_point;
    const int32_t mult = params->multiplier;
    const int shift = (int)params->shift;
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = (int32_t)input[i] - in_zp;
        const int32_t y = nnrt_multiply_by_quantized_multiplier(x, mult, shift) + out_zp;
        output[i] = (int8_t)nnrt_clamp_i32(y, INT8_MIN, INT8_MAX);
    }
    return NNRT_OK;
}
