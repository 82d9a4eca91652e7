/*
 * int8 SQUARED_DIFFERENCE with broadcasting, TFLM reference arithmetic
 * (squared_difference.cc): both inputs offset, shifted left by left_shift (7), scaled
 * by their own multiplier (scale / (2 * max scale)), subtracted, the difference squared
 * in int32, rescaled by the output multiplier, offset and clamped.
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int8_t apply(const nnrt_add_s8_params_t *p, int8_t x1, int8_t x2)
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
    return (int8_t)nnrt_clamp_i32(raw, p->act_min, p->act_max);
}

nnrt_status_t nnrt_squared_difference_s8(const nnrt_add_s8_params_t *params,
                                         const int8_t *input1, const int8_t *input2,
                                         int8_t *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || NNRT_SQUARED_DIFFERENCE_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = &params->bcast;
#define OP(x1, x2) apply(params, x1, x2)
    NNRT_BINARY_ELEMENTS(int8_t, b, input1, input2, output, OP);
#undef OP
    return NNRT_OK;
}
