/*
 * int16 SUB with broadcasting, TFLM reference arithmetic (internal/binary_quant.h with
 * left_shift 15, as sub_common.cc sets it for int16): each input offset, shifted left and
 * rescaled by its own multiplier; the result rescaled to the output, offset and clamped
 * to the activation range. In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"

NNRT_ADD_SUB_APPLY(apply, inline, int16_t, -)

NNRT_BINARY_KERNEL(nnrt_sub_s16, nnrt_add_s8_params_t, int16_t, NNRT_ADD_S16_PARAMS_BAD,
                   NNRT_BINARY_BCAST_FIELD, apply)
