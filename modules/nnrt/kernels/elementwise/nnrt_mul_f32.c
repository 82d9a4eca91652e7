/*
 * float32 MUL with broadcasting and fused activation.
 * out = min(max(in1 * in2, act_min), act_max). In place as the other binary kernels
 * (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

NNRT_BINARY_F32_ACT_KERNEL(nnrt_mul_f32, *)
