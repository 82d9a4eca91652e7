/*
 * int16 ABS, TFLM's elementwise.cc: |x - zp_in| (zero points are 0 for int16), as is
 * when the input and output scales are equal, else rescaled by the multiplier; plus the
 * output zero point, clamped to int16. Without quantisation, std::abs of the raw value
 * cast back (-32768 stays -32768).
 * Element-wise, in place capable.
 */
#include <stddef.h>
#include <stdlib.h>

#include "nnrt/kernels/math.h"
#include "nnrt/kernels/quant.h"

nnrt_status_t nnrt_abs_s16(const nnrt_abs_s16_params_t *params, const int16_t *input,
                           int16_t *output, int32_t size)
{
    if (params == NULL || input == NULL || output == NULL || size < 0
        || params->shift > 30 || params->shift < -31) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < size; ++i) {
        const int32_t v = abs((int32_t)input[i] - params->input_offset);
        const int32_t r = params->rescale
                              ? nnrt_multiply_by_quantized_multiplier(v, params->multiplier,
                                                                      params->shift)
                              : v;
        const int32_t out = r + params->output_offset;
        /* quantised: clamped; raw (TFLM's std::abs then static_cast): wraps */
        output[i] = (int16_t)(params->saturate ? nnrt_clamp_i32(out, INT16_MIN, INT16_MAX)
                                               : out);
    }
    return NNRT_OK;
}
