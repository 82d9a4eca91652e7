/*
 * int16 SQUARED_DIFFERENCE with broadcasting, TFLM reference arithmetic
 * (squared_difference.cc, zero points 0, left_shift 0): both inputs scaled by their own
 * multiplier, subtracted, the difference squared in int32, rescaled by the output
 * multiplier and clamped to int16. In place as the other binary kernels.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int16_t apply(const nnrt_add_s8_params_t *p, int16_t x1, int16_t x2)
{
    const int32_t shifted1 = (p->input1_offset + x1) * ((int32_t)1 << p->left_shift);
    const int32_t shifted2 = (p->input2_offset + x2) * ((int32_t)1 << p->left_shift);
    const int32_t scaled1 =
        nnrt_multiply_by_quantized_multiplier(shifted1, p->input1_multiplier, p->input1_shift);
    const int32_t scaled2 =
        nnrt_multiply_by_quantized_multiplier(shifted2, p->input2_multiplier, p->input2_shift);
    const int32_t diff = scaled1 - scaled2;
    const int32_t raw = nnrt_multiply_by_quantized_multiplier(diff * diff, p->output_multiplier,
                                                              p->output_shift)
                        + p->output_offset;
    return (int16_t)nnrt_clamp_i32(raw, p->act_min, p->act_max);
}

nnrt_status_t nnrt_squared_difference_s16(const nnrt_add_s8_params_t *params,
                                          const int16_t *input1, const int16_t *input2,
                                          int16_t *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(&params->bcast) || params->left_shift != 0
        || params->input1_offset != 0 || params->input2_offset != 0
        || params->output_offset != 0 || params->input1_shift > 0
        || params->input1_shift < -31 || params->input2_shift > 0
        || params->input2_shift < -31 || params->output_shift > 30
        || params->output_shift < -31 || params->act_min > params->act_max
        || params->act_min < INT16_MIN || params->act_max > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = &params->bcast;
#define OP(x1, x2) apply(params, x1, x2)
    NNRT_BINARY_ELEMENTS(int16_t, b, input1, input2, output, OP);
#undef OP
    return NNRT_OK;
}
