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
#include "../internal/binary_quant.h"

NNRT_MUL_APPLY(apply, int16_t)

NNRT_BINARY_KERNEL(nnrt_mul_s16, nnrt_mul_s8_params_t, int16_t, NNRT_MUL_S16_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
