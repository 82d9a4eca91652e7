/* TANH int8 (TFLM reference_integer_ops::Tanh): Q4.27 input, Q0.31 tanh, output on
 * the fixed scale 1/128 with zero point 0. */
#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/fixedpoint.h"

nnrt_status_t nnrt_tanh_s8(const nnrt_sigmoid_s8_params_t *params, const int8_t *input,
                           int8_t *output, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->input_range_radius < 0 ||
        (params->input_range_radius > 0 &&
         (params->input_shift < -31 || params->input_shift > 30))) {
        return NNRT_ERR_ARG;
    }
    const int32_t zp = params->input_zero_point;
    const int32_t radius = params->input_range_radius;
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = (int32_t)input[i] - zp;
        if (x <= -radius) {
            output[i] = INT8_MIN;
        } else if (x >= radius) {
            output[i] = INT8_MAX;
        } else {
            const int32_t x_q4 = nnrt_multiply_by_quantized_multiplier(
                x, params->input_multiplier, (int)params->input_shift);
            const int32_t y_q0 = nnrt_fp_tanh(x_q4, 4);
            const int32_t y = nnrt_rounding_divide_by_pot(y_q0, 24);
            output[i] = (int8_t)nnrt_clamp_i32(y, INT8_MIN, INT8_MAX);
        }
    }
    return NNRT_OK;
}
