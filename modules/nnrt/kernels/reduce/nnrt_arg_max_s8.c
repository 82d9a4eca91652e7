/*
 * int8_t ARG_MAX along one axis (TFLM's reference ArgMinMax with the micro kernel's
 * GreaterFn): the first index whose value no later one beats with `>`.
 */
#include <stddef.h>

#include "nnrt/kernels/reduce.h"

nnrt_status_t nnrt_arg_max_s8(const nnrt_arg_params_t *params, const int8_t *input,
                              int32_t *output)
{
    if (params == NULL || input == NULL || output == NULL || params->outer < 1
        || params->axis_size < 1 || params->inner < 1) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = params->axis_size;
    const int32_t inner = params->inner;
    for (int32_t o = 0; o < params->outer; ++o) {
        const int8_t *base = input + (ptrdiff_t)o * n * inner;
        for (int32_t i = 0; i < inner; ++i) {
            int8_t best = base[i];
            int32_t index = 0;
            for (int32_t a = 1; a < n; ++a) {
                const int8_t v = base[(ptrdiff_t)a * inner + i];
                if (v > best) {
                    best = v;
                    index = a;
                }
            }
            *output++ = index;
        }
    }
    return NNRT_OK;
}
