/*
 * int16 MUL with broadcasting, TFLM reference arithmetic (reference_integer_ops::Mul on
 * int16; mul_common.cc requires zero points 0): the product requantised by one
 * multiplier and clamped to the activation range. In place as the other binary kernels
 * (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"

static inline int16_t apply(const nnrt_mul_s8_params_t *p, int16_t x1, int16_t x2)
{
    const int32_t prod = (p->input1_offset + x1) * (p->input2_offset + x2);
    const int32_t raw =
        nnrt_multiply_by_quantized_multiplier(prod, p->output_multiplier, p->output_shift)
        + p->output_offset;
    return (int16_t)nnrt_clamp_i32(raw, p->act_min, p->act_max);
}

NNRT_BINARY_KERNEL(nnrt_mul_s16, nnrt_mul_s8_params_t, int16_t, NNRT_MUL_S16_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
