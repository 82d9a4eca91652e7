/*
 * int8 ADD_N, TFLM's reference AddN (ArithmeticParams): every input (same scale and zero
 * point) is shifted left by 20 and rescaled by the input multiplier, the sum is rescaled
 * by the output multiplier, offset and clamped. As TFLM, the accumulator starts from the
 * rescaled input offset (-zero point), not from 0. In place over any input.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"

static inline int32_t scaled(const nnrt_add_n_s8_params_t *p, int32_t v)
{
    return nnrt_multiply_by_quantized_multiplier(v * (1 << p->left_shift),
                                                 p->input_multiplier, p->input_shift);
}

nnrt_status_t nnrt_add_n_s8(const nnrt_add_n_s8_params_t *params, const int8_t *const *inputs,
                            int32_t num_inputs, int8_t *output, int32_t size)
{
    if (params == NULL || inputs == NULL || output == NULL || num_inputs < 1 || size < 0
        || params->left_shift < 0 || params->left_shift > 20 || params->input_shift > 0
        || params->output_shift > 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t j = 0; j < num_inputs; ++j) {
        if (inputs[j] == NULL) {
            return NNRT_ERR_ARG;
        }
    }
    for (int32_t i = 0; i < size; ++i) {
        int32_t acc = scaled(params, params->input_offset);
        for (int32_t j = 0; j < num_inputs; ++j) {
            acc += scaled(params, params->input_offset + inputs[j][i]);
        }
        const int32_t out = nnrt_multiply_by_quantized_multiplier(
                                acc, params->output_multiplier, params->output_shift)
                            + params->output_offset;
        output[i] = (int8_t)nnrt_clamp_i32(out, params->act_min, params->act_max);
    }
    return NNRT_OK;
}
