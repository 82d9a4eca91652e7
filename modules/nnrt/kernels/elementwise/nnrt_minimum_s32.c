/*
 * int32 MINIMUM with broadcasting: out = in1 < in2 ? in1 : in2, exactly TFLM's
 * expression (maximum_minimum.cc takes int16 and int32; quantisation parameters are
 * not used). In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

NNRT_BINARY_PICK_KERNEL(nnrt_minimum_s32, int32_t, <)
