/*
 * Internal to the nnrt kernels: the one body of the quantised LEAKY_RELU kernels, TFLM's
 * reference QuantizeLeakyRelu (int8 and int16 alike: leaky_relu.cc), so the int8 and
 * int16 kernels differ only in their element type and output range.
 */
#ifndef NNRT_KERNELS_INTERNAL_LEAKY_RELU_H_
#define NNRT_KERNELS_INTERNAL_LEAKY_RELU_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/quant.h"

/**
 * `nnrt_status_t NAME(const nnrt_leaky_relu_s8_params_t *params, const T *input,
 * T *output, int32_t size)`: x = in - in_zp; out = clamp(out_zp + (x >= 0 ? x * identity :
 * x * alpha), LO, HI). In place (each element written after it is read).
 */
#define NNRT_LEAKY_RELU_KERNEL(NAME, T, LO, HI)                                              \
    nnrt_status_t NAME(const nnrt_leaky_relu_s8_params_t *params, const T *input,           \
                       T *output, int32_t size)                                              \
    {                                                                                        \
        if (input == NULL || output == NULL || params == NULL || size < 0                    \
            || params->identity_multiplier < 0 || params->alpha_multiplier < 0               \
            || params->identity_shift < -31 || params->identity_shift > 30                   \
            || params->alpha_shift < -31 || params->alpha_shift > 30) {                      \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const int32_t in_zp = params->input_zero_point;                                      \
        const int32_t out_zp = params->output_zero_point;                                    \
        for (int32_t i = 0; i < size; ++i) {                                                 \
            const int32_t x = (int32_t)input[i] - in_zp;                                     \
            int32_t y;                                                                       \
            if (x >= 0) {                                                                    \
                y = nnrt_multiply_by_quantized_multiplier(x, params->identity_multiplier,    \
                                                          (int)params->identity_shift);      \
            } else {                                                                         \
                y = nnrt_multiply_by_quantized_multiplier(x, params->alpha_multiplier,       \
                                                          (int)params->alpha_shift);         \
                if (params->alpha_negative) {                                                \
                    y = -y;                                                                  \
                }                                                                            \
            }                                                                                \
            output[i] = (T)nnrt_clamp_i32(out_zp + y, LO, HI);                               \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

/**
 * `nnrt_status_t NAME(int32_t lo, int32_t hi, const T *input, T *output, int32_t size)`:
 * out = clamp(in, lo, hi) (RELU6 as TFLM's Relu6Quantized, RELU without requantisation),
 * NNRT_ERR_ARG when BAD(lo, hi, size). In place.
 */
#define NNRT_CLAMP_KERNEL(NAME, T, BAD)                                                      \
    nnrt_status_t NAME(int32_t lo, int32_t hi, const T *input, T *output, int32_t size)      \
    {                                                                                        \
        if (input == NULL || output == NULL || BAD(lo, hi, size)) {                          \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const T lo_t = (T)lo;                                                                \
        const T hi_t = (T)hi;                                                                \
        for (int32_t i = 0; i < size; ++i) {                                                 \
            const T v = input[i];                                                            \
            output[i] = v > hi_t ? hi_t : (v < lo_t ? lo_t : v);                             \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

#endif /* NNRT_KERNELS_INTERNAL_LEAKY_RELU_H_ */
