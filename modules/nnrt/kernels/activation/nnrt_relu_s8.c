/* RELU int8 with requantisation (TFLM reference ReluQuantized). */
#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/quant.h"

nnrt_status_t nnrt_relu_s8(const nnrt_relu_s8_params_t *params, const int8_t *input,
                           int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->shift < -31 || params->shift > 30 || params->act_min < INT8_MIN ||
        params->act_max > INT8_MAX || params->act_min > params->act_max) {
        return NNRT_ERR_ARG;
    }
    const int32_t in_zp = params->input_zero_point;
    const int32_t out_zp = params->output_zero_point;
    const int32_t mult = params->multiplier;
    const int shift = (int)params->shift;
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = (int32_t)input[i] - in_zp;
        const int32_t y = out_zp + nnrt_multiply_by_quantized_multiplier(x, mult, shift);
        output[i] = (int8_t)nnrt_clamp_i32(y, params->act_min, params->act_max);
    }
    return NNRT_OK;
}
