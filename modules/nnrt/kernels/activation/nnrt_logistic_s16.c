/*
 * LOGISTIC int16 (TFLM reference_integer_ops::Logistic, int16): symmetric input, output
 * on the fixed scale 2^-15. The input is rescaled so that 2^9 steps are one table step
 * (1/24): x' = (x * multiplier + round) >> left_shift; |x'| indexes the sigmoid table
 * (entry |x'| >> 9, the low 9 bits interpolate to the next entry), and a negative x'
 * mirrors the result (1 - s). The table is nnrt_sigmoid_table_u16.
 */
#include "nnrt/kernels/activation.h"
#include "../internal/sigmoid.h"

nnrt_status_t nnrt_logistic_s16(const nnrt_sigmoid_s16_params_t *params,
                                const int16_t *input, int16_t *output, int32_t size)
{
    if (NNRT_SIGMOID_S16_ARGS_BAD(params, input, output, size)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = nnrt_sigmoid_s16_rescale(params, input[i]);
        const uint32_t ax = (uint32_t)(x < 0 ? -x : x);
        const uint32_t k = ax >> 9;
        uint32_t r;
        if (k >= 255u) {
            r = (uint32_t)0x7FFF << 10;
        } else {
            const uint32_t lo = nnrt_sigmoid_table_u16[k];
            const uint32_t hi = nnrt_sigmoid_table_u16[k + 1u];
            r = (lo << 9) + (ax & 0x1FFu) * (hi - lo);  /* wraps like the reference */
        }
        r = (x >= 0) ? r + (1u << 9) : ((1u << 25) - r + (1u << 9) - 1u);
        output[i] = (int16_t)(uint16_t)(r >> 10);
    }
    return NNRT_OK;
}
