/*
 * int8 L2_NORMALIZATION over the last axis, TFLM's reference_integer_ops
 * L2Normalization: per row the int32 sum of (x - zp)^2, its inverse square root as
 * GetInvSqrtQuantizedMultiplierExp computes it (gemmlowp's Newton iteration in Q3.28,
 * 5 steps, times sqrt(2)/2), then each (x - zp) rescaled by it with 7 more bits (the
 * output is in 1/128 units, zero point 0, whatever the output tensor says, as TFLM),
 * clamped to int8. Each row is read whole before it is written (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/normalize.h"
#include "nnrt/kernels/fixedpoint.h"

static void inv_sqrt(int32_t input, int32_t *multiplier, int *shift)
{
    if (input <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++s;
    }
    const int pairs = (nnrt_fp_clz((uint32_t)input) - 1) / 2 - 1;
    s -= pairs;
    input = (int32_t)((uint32_t)input << (2 * pairs));
    const int32_t half_input = nnrt_rounding_divide_by_pot(input >> 1, 1);
    const int32_t half_three = (1 << 28) + (1 << 27); /* 1.5 in Q3.28 */
    int32_t x = 1 << 28;                              /* 1.0 in Q3.28 */
    for (int i = 0; i < 5; ++i) {
        const int32_t x3 = nnrt_fp_rescale(nnrt_fp_mul(nnrt_fp_mul(x, x), x), 9, 3);
        x = nnrt_fp_rescale(nnrt_fp_sub(nnrt_fp_mul(half_three, x),
                                        nnrt_fp_mul(half_input, x3)), 6, 3);
    }
    x = nnrt_fp_mul(x, 1518500250); /* sqrt(2) / 2 in Q0.31 */
    if (s < 0) {
        x = (int32_t)((uint32_t)x << -s);
        s = 0;
    }
    *multiplier = x;
    *shift = -s; /* kReverseShift */
}

nnrt_status_t nnrt_l2_normalization_s8(const int8_t *input, int8_t *output, int32_t outer,
                                       int32_t depth, int32_t input_zero_point)
{
    if (input == NULL || output == NULL || outer < 0 || depth < 1) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < outer; ++i) {
        const int8_t *x = input + (ptrdiff_t)i * depth;
        int8_t *y = output + (ptrdiff_t)i * depth;
        int32_t acc = 0;
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t v = x[c] - input_zero_point;
            acc += v * v;
        }
        int32_t m;
        int sh;
        inv_sqrt(acc, &m, &sh);
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t v = nnrt_multiply_by_quantized_multiplier(x[c] - input_zero_point,
                                                                    m, sh + 7);
            y[c] = (int8_t)nnrt_clamp_i32(v, INT8_MIN, INT8_MAX);
        }
    }
    return NNRT_OK;
}
