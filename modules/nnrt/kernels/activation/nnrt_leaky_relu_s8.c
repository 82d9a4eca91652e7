/* LEAKY_RELU int8 (TFLM reference QuantizeLeakyRelu). */
#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/quant.h"

nnrt_status_t nnrt_leaky_relu_s8(const nnrt_leaky_relu_s8_params_t *params,
                                 const int8_t *input, int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->identity_multiplier < 0 || params->alpha_multiplier < 0 ||
        params->identity_shift < -31 || params->identity_shift > 30 ||
        params->alpha_shift < -31 || params->alpha_shift > 30) {
        return NNRT_ERR_ARG;
    }
    const int32_t in_zp = params->input_zero_point;
    const int32_t out_zp = params->output_zero_point;
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = (int32_t)input[i] - in_zp;
        int32_t y;
        if (x >= 0) {
            y = nnrt_multiply_by_quantized_multiplier(x, params->identity_multiplier,
                                                      (int)params->identity_shift);
        } else {
            y = nnrt_multiply_by_quantized_multiplier(x, params->alpha_multiplier,
                                                      (int)params->alpha_shift);
            if (params->alpha_negative) {
                y = -y;
            }
        }
        output[i] = (int8_t)nnrt_clamp_i32(out_zp + y, INT8_MIN, INT8_MAX);
    }
    return NNRT_OK;
}
