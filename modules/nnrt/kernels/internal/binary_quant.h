/*
 * Internal to the nnrt kernels: the one element of the quantised binary kernels in
 * TFLM's reference arithmetic: ADD/SUB (add.cc, sub.cc) and SQUARED_DIFFERENCE
 * (squared_difference.cc, int8 and int16). Both inputs offset, shifted left by
 * left_shift, scaled by their own multiplier, combined, rescaled by the output
 * multiplier, offset and clamped.
 */
#ifndef NNRT_KERNELS_INTERNAL_BINARY_QUANT_H_
#define NNRT_KERNELS_INTERNAL_BINARY_QUANT_H_

#include <stdint.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"

/**
 * Defines `static ATTRS T NAME(const nnrt_add_s8_params_t *p, T x1, T x2)`: ADD
 * (OPERATOR +) or SUB (-) of the two rescaled inputs, int8 (left_shift 20) or int16
 * (left_shift 15: TFLM's add_common.cc / sub_common.cc), clamped to the activation range.
 */
#define NNRT_ADD_SUB_APPLY(NAME, ATTRS, T, OPERATOR)                                          \
    static ATTRS T NAME(const nnrt_add_s8_params_t *p, T x1, T x2)                           \
    {                                                                                        \
        const int32_t shifted1 = (p->input1_offset + x1) * ((int32_t)1 << p->left_shift);    \
        const int32_t shifted2 = (p->input2_offset + x2) * ((int32_t)1 << p->left_shift);    \
        const int32_t scaled1 = nnrt_multiply_by_quantized_multiplier(                       \
            shifted1, p->input1_multiplier, p->input1_shift);                                \
        const int32_t scaled2 = nnrt_multiply_by_quantized_multiplier(                       \
            shifted2, p->input2_multiplier, p->input2_shift);                                \
        const int32_t raw = nnrt_multiply_by_quantized_multiplier(                           \
                                scaled1 OPERATOR scaled2, p->output_multiplier,              \
                                p->output_shift)                                             \
                            + p->output_offset;                                              \
        return (T)nnrt_clamp_i32(raw, p->act_min, p->act_max);                               \
    }

/** The int8 NNRT_ADD_SUB_APPLY(). */
#define NNRT_ADD_SUB_S8_APPLY(NAME, ATTRS, OPERATOR)                                          \
    NNRT_ADD_SUB_APPLY(NAME, ATTRS, int8_t, OPERATOR)

/**
 * Defines `static inline T NAME(const nnrt_mul_s8_params_t *p, T x1, T x2)`: MUL, the
 * product of the offset inputs requantised by one multiplier, offset and clamped (TFLM's
 * MulElementwise, int8 and int16 alike).
 */
#define NNRT_MUL_APPLY(NAME, T)                                                               \
    static inline T NAME(const nnrt_mul_s8_params_t *p, T x1, T x2)                          \
    {                                                                                        \
        const int32_t prod = (p->input1_offset + x1) * (p->input2_offset + x2);              \
        const int32_t raw =                                                                  \
            nnrt_multiply_by_quantized_multiplier(prod, p->output_multiplier,                \
                                                  p->output_shift)                           \
            + p->output_offset;                                                              \
        return (T)nnrt_clamp_i32(raw, p->act_min, p->act_max);                               \
    }

/** Defines `static inline T NAME(const nnrt_add_s8_params_t *p, T x1, T x2)`. */
#define NNRT_SQUARED_DIFFERENCE_APPLY(NAME, T)                                                \
    static inline T NAME(const nnrt_add_s8_params_t *p, T x1, T x2)                          \
    {                                                                                        \
        const int32_t shifted1 = (p->input1_offset + x1) * ((int32_t)1 << p->left_shift);    \
        const int32_t shifted2 = (p->input2_offset + x2) * ((int32_t)1 << p->left_shift);    \
        const int32_t scaled1 = nnrt_multiply_by_quantized_multiplier(                       \
            shifted1, p->input1_multiplier, p->input1_shift);                                \
        const int32_t scaled2 = nnrt_multiply_by_quantized_multiplier(                       \
            shifted2, p->input2_multiplier, p->input2_shift);                                \
        const int32_t diff = scaled1 - scaled2;                                              \
        const int32_t raw = nnrt_multiply_by_quantized_multiplier(                           \
                                diff * diff, p->output_multiplier, p->output_shift)          \
                            + p->output_offset;                                              \
        return (T)nnrt_clamp_i32(raw, p->act_min, p->act_max);                               \
    }

#endif /* NNRT_KERNELS_INTERNAL_BINARY_QUANT_H_ */
