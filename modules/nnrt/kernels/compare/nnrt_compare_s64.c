/*
 * int64_t comparisons with broadcasting (TFLM's reference ComparisonNoScaling /
 * BroadcastComparison4DSlowNoScaling): raw values compared, a bool written per output
 * element (see compare.h).
 */
#include <stddef.h>

#include "nnrt/kernels/compare.h"
#include "../internal/compare.h"

NNRT_COMPARE_FNS(cmp, int64_t, nnrt_compare_params_t, NNRT_CMP_RAW, NNRT_CMP_RAW)

nnrt_status_t nnrt_compare_s64(const nnrt_compare_params_t *params, const int64_t *input1,
                               const int64_t *input2, bool *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(&params->bcast)) {
        return NNRT_ERR_ARG;
    }
    NNRT_COMPARE_DISPATCH(cmp, params, input1, input2, output);
    return NNRT_OK;
}
