/*
 * int8 MINIMUM with broadcasting: out = in1 < in2 ? in1 : in2, exactly TFLM's
 * expression. Raw int8 comparison, as TFLM (quantisation
 * parameters are not used). In place as the other binary kernels (internal/binary.h).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

NNRT_BINARY_PICK_KERNEL(nnrt_minimum_s8, int8_t, <)
