/*
 * int8 MUL with broadcasting, TFLM reference arithmetic.
 * The product of the offset inputs (int32) is requantised by one multiplier, offset and
 * clamped to the activation range.
 * In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"

NNRT_MUL_APPLY(apply, int8_t)

NNRT_BINARY_KERNEL(nnrt_mul_s8, nnrt_mul_s8_params_t, int8_t, NNRT_MUL_S8_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
