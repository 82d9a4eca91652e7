/*
 * int8 CUMSUM along one axis (reduce.h), TFLM's reference quantized CumSum: every
 * element, offset by minus the input zero point and shifted left by left_shift, is
 * rescaled by the input multiplier (TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp)
 * and added to an accumulator that starts, as TFLM's does, at the rescaled offset of a
 * zero element rather than at 0; each output is the accumulator (before the element
 * for an exclusive sum) rescaled by the output multiplier, plus the output zero point,
 * clamped. The accumulator adds in 32 bits with two's complement wrap-around, as TFLM's
 * int32 accumulator does on long axes. Each element is read before its output is
 * written, and no later step reads it: in place capable.
 */
#include <stddef.h>

#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/reduce.h"

nnrt_status_t nnrt_cumsum_s8(const nnrt_cumsum_s8_params_t *params, const int8_t *input,
                             int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL) {
        return NNRT_ERR_ARG;
    }
    const nnrt_cumsum_params_t *g = &params->geom;
    if (g->before < 1 || g->depth < 1 || g->after < 1 || params->left_shift < 0
        || params->left_shift > 22 || params->input_shift > 0 || params->input_shift < -31
        || params->output_shift > 0 || params->output_shift < -31
        || params->input_offset < -INT8_MAX || params->input_offset > INT8_MAX + 1
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX
        || params->act_min > params->act_max) {
        return NNRT_ERR_ARG;
    }
    const ptrdiff_t depth = g->depth;
    const ptrdiff_t after = g->after;
    const int32_t start = nnrt_multiply_by_quantized_multiplier(
        params->input_offset * (1 << params->left_shift), params->input_multiplier,
        params->input_shift);
    for (ptrdiff_t b = 0; b < g->before; ++b) {
        for (ptrdiff_t a = 0; a < after; ++a) {
            uint32_t acc = (uint32_t)start;
            for (ptrdiff_t d = 0; d < depth; ++d) {
                const ptrdiff_t k = g->reverse ? depth - 1 - d : d;
                const ptrdiff_t index = (b * depth + k) * after + a;
                const int32_t y = (params->input_offset + input[index]) * (1 << params->left_shift);
                const int32_t scaled = nnrt_multiply_by_quantized_multiplier(
                    y, params->input_multiplier, params->input_shift);
                uint32_t out_acc = acc;
                acc += (uint32_t)scaled;
                if (!g->exclusive) {
                    out_acc = acc;
                }
                const int32_t v = nnrt_multiply_by_quantized_multiplier(
                                      (int32_t)out_acc, params->output_multiplier,
                                      params->output_shift)
                                  + params->output_offset;
                output[index] = (int8_t)nnrt_clamp_i32(v, params->act_min, params->act_max);
            }
        }
    }
    return NNRT_OK;
}
