/*
 * float32 MINIMUM with broadcasting: out = in1 < in2 ? in1 : in2, exactly TFLM's
 * expression. In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

NNRT_BINARY_PICK_KERNEL(nnrt_minimum_f32, float, <)
