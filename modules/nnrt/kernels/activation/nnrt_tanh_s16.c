/*
 * TANH int16 (TFLM reference_integer_ops::Tanh, int16): tanh(x) = 2 sigmoid(2x) - 1 on
 * the sigmoid table, output on the fixed scale 2^-15. x' = (x * multiplier + round) >>
 * left_shift, 2^8 steps per table step; the table value (Q0.16, interpolated on the
 * low 8 bits) minus one half, mirrored for negative x', gives the output.
 */
#include "nnrt/kernels/activation.h"
#include "../internal/sigmoid.h"

nnrt_status_t nnrt_tanh_s16(const nnrt_sigmoid_s16_params_t *params, const int16_t *input,
                            int16_t *output, int32_t size)
{
    if (NNRT_SIGMOID_S16_ARGS_BAD(params, input, output, size)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const int32_t x = nnrt_sigmoid_s16_rescale(params, input[i]);
        const uint32_t ax = (uint32_t)(x < 0 ? -x : x);
        const uint32_t k = ax >> 8;
        int32_t r;
        if (k >= 255u) {
            r = (int32_t)0xFFFF << 8;
        } else {
            const uint32_t lo = nnrt_sigmoid_table_u16[k];
            const uint32_t hi = nnrt_sigmoid_table_u16[k + 1u];
            r = (int32_t)((lo << 8) + (ax & 0xFFu) * (hi - lo));
        }
        r = (x >= 0) ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        output[i] = (int16_t)(r >> 8);
    }
    return NNRT_OK;
}
