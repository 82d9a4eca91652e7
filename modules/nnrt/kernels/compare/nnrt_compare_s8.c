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

NNRT_COMPARE_KERNEL(nnrt_compare_s8, cmp, int8_t, nnrt_compare_s8_params_t,
                    NNRT_COMPARE_S8_PARAMS_BAD, scaled1, scaled2)
