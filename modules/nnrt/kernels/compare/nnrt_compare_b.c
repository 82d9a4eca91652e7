/*
 * bool comparisons with broadcasting (TFLM's reference ComparisonNoScaling /
 * BroadcastComparison4DSlowNoScaling): raw values compared, a bool written per output
 * element (see compare.h).
 */
#include <stddef.h>

#include "nnrt/kernels/compare.h"
#include "../internal/compare.h"

NNRT_COMPARE_KERNEL(nnrt_compare_b, cmp, bool, nnrt_compare_params_t, NNRT_COMPARE_PARAMS_BAD,
                    NNRT_CMP_RAW, NNRT_CMP_RAW)
