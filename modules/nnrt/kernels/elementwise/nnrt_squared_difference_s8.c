/*
 * int8 SQUARED_DIFFERENCE with broadcasting, TFLM reference arithmetic
 * (internal/binary_quant.h; left_shift 7). In place as the other binary kernels
 * (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"

NNRT_SQUARED_DIFFERENCE_APPLY(apply, int8_t)

NNRT_BINARY_KERNEL(nnrt_squared_difference_s8, nnrt_add_s8_params_t, int8_t,
                   NNRT_SQUARED_DIFFERENCE_S8_PARAMS_BAD, NNRT_BINARY_BCAST_FIELD, apply)
