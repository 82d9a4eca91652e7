/*
 * int8 comparisons with broadcasting, TFLM's reference ComparisonWithScaling: each
 * input becomes MultiplyByQuantizedMultiplierSmallerThanOneExp((x - zp) << left_shift,
 * its multiplier, its shift), then the two are compared (see compare.h).
 */
#include <stddef.h>

#include "nnrt/kernels/compare.h"
#include "nnrt/kernels/quant.h"
#include "../internal/compare.h"

static inline int32_t scaled1(const nnrt_compare_s8_params_t *p, int8_t x)
{
    const int32_t v = (p->input1_offset + x) * (1 << p->left_shift);
    return nnrt_multiply_by_quantized_multiplier(v, p->input1_multiplier, p->input1_shift);
}

static inline int32_t scaled2(const nnrt_compare_s8_params_t *p, int8_t x)
{
    const int32_t v = (p->input2_offset + x) * (1 << p->left_shift);
    return nnrt_multiply_by_quantized_multiplier(v, p->input2_multiplier, p->input2_shift);
}

NNRT_COMPARE_FNS(cmp, int8_t, nnrt_compare_s8_params_t, scaled1, scaled2)

nnrt_status_t nnrt_compare_s8(const nnrt_compare_s8_params_t *params, const int8_t *input1,
                              const int8_t *input2, bool *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(&params->bcast) || params->left_shift < 0
        || params->left_shift > 16 || params->input1_shift > 0 || params->input2_shift > 0
        || params->input1_shift < -31 || params->input2_shift < -31) {
        return NNRT_ERR_ARG;
    }
    NNRT_COMPARE_DISPATCH(cmp, params, input1, input2, output);
    return NNRT_OK;
}
