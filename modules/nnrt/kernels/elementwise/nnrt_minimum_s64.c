/*
 * int64 MINIMUM with broadcasting: out = in1 < in2 ? in1 : in2, exactly TFLM's
 * expression (maximum_minimum.cc takes int64). In place as the other binary kernels
 * (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

NNRT_BINARY_PICK_KERNEL(nnrt_minimum_s64, int64_t, <)
