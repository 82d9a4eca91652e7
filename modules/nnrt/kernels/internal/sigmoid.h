/*
 * Internal to the nnrt kernels: the one int8 LOGISTIC / TANH kernel (TFLM
 * reference_integer_ops::Logistic / Tanh): the input rescaled to Q4.27, the Q0.31
 * function FN (nnrt/kernels/fixedpoint.h), the result divided by 2^SHIFT and offset by
 * ZERO_POINT onto the fixed output scale; inputs beyond the range radius saturate.
 */
#ifndef NNRT_KERNELS_INTERNAL_SIGMOID_H_
#define NNRT_KERNELS_INTERNAL_SIGMOID_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/fixedpoint.h"

/** `nnrt_status_t NAME(const nnrt_sigmoid_s8_params_t *params, const int8_t *input,
 *  int8_t *output, int32_t size)`. */
#define NNRT_SIGMOID_S8_KERNEL(NAME, FN, SHIFT, ZERO_POINT)                                  \
    nnrt_status_t NAME(const nnrt_sigmoid_s8_params_t *params, const int8_t *input,          \
                       int8_t *output, int32_t size)                                         \
    {                                                                                        \
        if (input == NULL || output == NULL || params == NULL || size < 0                    \
            || NNRT_SIGMOID_S8_PARAMS_BAD(params)) {                                         \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const int32_t zp = params->input_zero_point;                                         \
        const int32_t radius = params->input_range_radius;                                   \
        for (int32_t i = 0; i < size; ++i) {                                                 \
            const int32_t x = (int32_t)input[i] - zp;                                        \
            if (x <= -radius) {                                                              \
                output[i] = INT8_MIN;                                                        \
            } else if (x >= radius) {                                                        \
                output[i] = INT8_MAX;                                                        \
            } else {                                                                         \
                const int32_t x_q4 = nnrt_multiply_by_quantized_multiplier(                  \
                    x, params->input_multiplier, (int)params->input_shift);                  \
                const int32_t y_q0 = FN(x_q4, 4);                                            \
                const int32_t y = nnrt_rounding_divide_by_pot(y_q0, SHIFT) + (ZERO_POINT);   \
                output[i] = (int8_t)nnrt_clamp_i32(y, INT8_MIN, INT8_MAX);                   \
            }                                                                                \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

/* The int16 LOGISTIC / TANH kernels' argument guard and input rescale (TFLM's
 * reference_integer_ops Logistic / Tanh, int16): x' = (x * multiplier + round) >>
 * left_shift, on which each kernel indexes the sigmoid table with its own step. */
#define NNRT_SIGMOID_S16_ARGS_BAD(params, input, output, size)                               \
    ((params) == NULL || (input) == NULL || (output) == NULL || (size) < 0                   \
     || (params)->input_multiplier < 1 || (params)->input_multiplier > 0xFFFF                \
     || (params)->input_left_shift < 0 || (params)->input_left_shift > 31)

static inline int32_t nnrt_sigmoid_s16_rescale(const nnrt_sigmoid_s16_params_t *params,
                                               int16_t x)
{
    const int32_t shift = params->input_left_shift;
    const int32_t half = (shift > 0) ? (int32_t)1 << (shift - 1) : 0;
    return ((int32_t)x * params->input_multiplier + half) >> shift;
}

#endif /* NNRT_KERNELS_INTERNAL_SIGMOID_H_ */
