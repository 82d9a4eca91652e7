/*
 * RSQRT int8 through a 256-entry table computed at build time from TFLM's fixed-point
 * RsqrtEvalQuantized (nnopt.lowering.rsqrt). TFLM refuses an input below the input zero
 * point (a negative real value) with an error: so does this kernel.
 */
#include "nnrt/kernels/math.h"

nnrt_status_t nnrt_rsqrt_s8(const int8_t *table, int32_t input_zero_point, const int8_t *input,
                            int8_t *output, int32_t size)
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
