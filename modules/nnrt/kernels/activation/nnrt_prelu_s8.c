/*
 * int8 PRELU with a broadcast alpha, TFLM's reference BroadcastPrelu4DSlow: a
 * non-negative (x - zp_in) is rescaled by multiplier 1, a negative one is multiplied by
 * (alpha - zp_alpha) and rescaled by multiplier 2; then the output zero point, clamped
 * to [-128, 127]. The output is walked in row-major order through the build-time
 * broadcast descriptor; each element is written after its inputs are read (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int8_t apply(const nnrt_prelu_s8_params_t *p, int8_t x, int8_t alpha)
{
    const int32_t v = p->input_offset + x;
    int32_t out;
    if (v >= 0) {
        out = nnrt_multiply_by_quantized_multiplier(v, p->output_multiplier_1,
                                                    p->output_shift_1);
    } else {
        out = nnrt_multiply_by_quantized_multiplier(v * (p->alpha_offset + alpha),
                                                    p->output_multiplier_2,
                                                    p->output_shift_2);
    }
    return (int8_t)nnrt_clamp_i32(out + p->output_offset, INT8_MIN, INT8_MAX);
}

nnrt_status_t nnrt_prelu_s8(const nnrt_prelu_s8_params_t *params, const int8_t *input,
                            const int8_t *alpha, int8_t *output)
{
    if (params == NULL || input == NULL || alpha == NULL || output == NULL
        || !nnrt_broadcast_valid(&params->bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = &params->bcast;
#define OP(x1, x2) apply(params, x1, x2)
    NNRT_BINARY_ELEMENTS(int8_t, b, input, alpha, output, OP);
#undef OP
    return NNRT_OK;
}
