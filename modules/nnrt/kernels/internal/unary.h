/*
 * Internal to the nnrt kernels: the one skeleton of the float32 element-wise unary
 * kernels (math.h: ABS, CEIL, COS, EXP, FLOOR, LOG, NEG, ROUND, RSQRT, SIN, SQRT,
 * SQUARE; activation.h: RELU, RELU6, TANH, LOGISTIC, HARD_SWISH, ELU). Each element is
 * written after it is read, so output may alias input (in place).
 *
 * A macro, not a function: each kernel expands it around its own per-element
 * expression, so the compiler generates the code of the loop written out in the kernel.
 */
#ifndef NNRT_KERNELS_INTERNAL_UNARY_H_
#define NNRT_KERNELS_INTERNAL_UNARY_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/activation.h"

/**
 * `nnrt_status_t NAME(const float *input, float *output, int32_t size)`: NNRT_ERR_ARG
 * for a NULL pointer or a size nnrt_unary_f32_check() rejects (the same predicate,
 * NNRT_UNARY_F32_SIZE_BAD()), else output[i] = EXPR with `x` the input element.
 */
#define NNRT_UNARY_F32_KERNEL(NAME, EXPR)                                                    \
    nnrt_status_t NAME(const float *input, float *output, int32_t size)                      \
    {                                                                                        \
        if (input == NULL || output == NULL || NNRT_UNARY_F32_SIZE_BAD(size)) {              \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        for (int32_t i = 0; i < size; ++i) {                                                 \
            const float x = input[i];                                                        \
            output[i] = EXPR;                                                                \
        }                                                                                    \
        return NNRT_OK;                                                                      \
    }

#endif /* NNRT_KERNELS_INTERNAL_UNARY_H_ */
