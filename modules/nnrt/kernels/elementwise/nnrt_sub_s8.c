/*
 * int8 SUB with broadcasting, TFLM reference arithmetic (internal/binary_quant.h): each
 * input offset, shifted left by left_shift and rescaled by its own multiplier; the
 * difference rescaled to the output, offset and clamped to the activation range (not a
 * negated multiplier: the rounding of a negative multiplier differs). In
 * place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"

NNRT_ADD_SUB_S8_APPLY(apply, inline, -)

NNRT_BINARY_KERNEL(nnrt_sub_s8, nnrt_add_s8_params_t, int8_t, NNRT_ADD_S8_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
