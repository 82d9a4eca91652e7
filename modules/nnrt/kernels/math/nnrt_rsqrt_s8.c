/*
 * int8 RSQRT as a 256-entry table built at compile time from TFLM's RsqrtEvalQuantized
 * (GetInvSqrtQuantizedMultiplierExp and two rescales, see nnopt.lowering.rsqrt). As in
 * TFLM, an input below the zero point (a negative real value) is an error
 * (NNRT_ERR_ARG). Element-wise, in place capable.
 */
#include <stddef.h>

#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_rsqrt_s8(const int8_t *table, int32_t input_zero_point,
                            const int8_t *input, int8_t *output, int32_t size)
{
    if (table == NULL || input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        if (input[i] < input_zero_point) {
            return NNRT_ERR_ARG;
        }
        output[i] = table[(uint8_t)input[i]];
    }
    return NNRT_OK;
}
