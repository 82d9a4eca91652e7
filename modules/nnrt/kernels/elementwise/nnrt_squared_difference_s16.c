/*
 * int16 SQUARED_DIFFERENCE with broadcasting, TFLM reference arithmetic
 * (internal/binary_quant.h; zero points 0, left_shift 0), clamped to int16. In
 * place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"

NNRT_SQUARED_DIFFERENCE_APPLY(apply, int16_t)

NNRT_BINARY_KERNEL(nnrt_squared_difference_s16, nnrt_add_s8_params_t, int16_t,
                   NNRT_SQUARED_DIFFERENCE_S16_PARAMS_BAD, NNRT_BINARY_BCAST_FIELD, apply)
