/*
 * SOFTMAX int16 -> int16 (TFLM reference_ops::SoftmaxInt16, softmax.h of
 * tensorflow/lite/kernels/internal/reference): per row, each difference to the row
 * maximum is rescaled so that [-65535, 0] spans [-10, 0], looked up in the exp table
 * (Q0.15, linear interpolation between entries), summed; the sum's reciprocal comes
 * from the 1 / (1 + x) table after normalising the sum to [1, 2); each exp times the
 * reciprocal, rounded, clamped to [0, 32767] (output scale 1/32768, zero point 0).
 * The exps are kept in the output row until the sum is known, as TFLM does; element c
 * of a row is read (for the maximum, then for its exp) before out[c] is written, so the
 * output may equal the input.
 */
#include <stddef.h>

#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/softmax.h"

/* TFLM's LUTLookup(int16_t, const int16_t *): entry 256 + (value >> 7), interpolated by
 * the low 7 bits, rounded. */
static int16_t lut_lookup(int16_t value, const int16_t *lut)
{
    const int32_t index = 256 + (value >> 7);
    const int32_t offset = value & 0x7f;
    const int32_t base = lut[index];
    const int32_t slope = lut[index + 1] - lut[index];
    return (int16_t)(base + ((slope * offset + 64) >> 7));
}

static uint32_t leading_zeros(uint32_t v)
{
    uint32_t n = 0;
    if (v == 0u) {
        return 32u;
    }
    while ((v & 0x80000000u) == 0u) {
        v <<= 1;
        ++n;
    }
    return n;
}

nnrt_status_t nnrt_softmax_s16(const nnrt_softmax_s16_params_t *params, const int16_t *input,
                               int16_t *output, int32_t rows, int32_t depth)
{
    if (params == NULL || input == NULL || output == NULL
        || NNRT_SOFTMAX_S16_ARGS_BAD(params, rows, depth)) {
        return NNRT_ERR_ARG;
    }
    for (int32_t r = 0; r < rows; ++r) {
        const int16_t *in = input + (size_t)r * (size_t)depth;
        int16_t *out = output + (size_t)r * (size_t)depth;
        int16_t max_in_row = INT16_MIN;
        for (int32_t c = 0; c < depth; ++c) {
            max_in_row = in[c] > max_in_row ? in[c] : max_in_row;
        }
        int32_t sum_of_exps = 0; /* Q16.15 */
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t diff = (int32_t)in[c] - max_in_row;
            const int32_t scaled = nnrt_multiply_by_quantized_multiplier(
                diff, params->input_multiplier, params->input_left_shift);
            const int32_t sym = nnrt_clamp_i32(scaled + 32767, INT16_MIN, INT16_MAX);
            out[c] = lut_lookup((int16_t)sym, nnrt_softmax_s16_exp_table);
            sum_of_exps += out[c];
        }
        /* the reciprocal of the sum: normalised to [1, 2), 1 / (1 + x) looked up */
        const uint32_t headroom_plus_one = leading_zeros((uint32_t)sum_of_exps);
        const int32_t shifted_sum =
            (int32_t)((((int64_t)sum_of_exps << (headroom_plus_one - 1u)) + (1 << 13)) >> 14);
        const int32_t sym_sum = nnrt_clamp_i32(shifted_sum - ((1 << 15) + (1 << 16)),
                                               INT16_MIN, INT16_MAX);
        const int32_t reciprocal = lut_lookup((int16_t)sym_sum, nnrt_softmax_s16_recip_table);
        const uint32_t right_shift = 31u - headroom_plus_one;
        const int64_t round = (int64_t)1 << (right_shift - 1u);
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t v =
                (int32_t)(((int64_t)out[c] * (int64_t)reciprocal + round) >> right_shift);
            out[c] = (int16_t)nnrt_clamp_i32(v, 0, INT16_MAX);
        }
    }
    return NNRT_OK;
}
