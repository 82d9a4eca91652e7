/*
 * bool LOGICAL_AND with broadcasting (TFLM's logical.cc, BroadcastBinaryFunction4DSlow):
 * out = in1 && in2. Each element is written after its inputs are read (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/compare.h"
#include "../internal/binary.h"

#define LOGICAL(unused, x, y) ((x) && (y))

NNRT_BINARY_KERNEL(nnrt_logical_and_b, nnrt_broadcast_t, bool, NNRT_BINARY_BCAST_BAD,
                   NNRT_BINARY_BCAST_SELF, LOGICAL)
