/*
 * The argument check of the int16 x int8 (16x8) convolution kernels (conv.h): a valid
 * geometry without a pool, an int16 activation range, and multipliers and shifts in
 * the range TFLM's 64-bit requantisation takes (multiplier >= 0, shift in [-31, 7]).
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

nnrt_status_t nnrt_conv_s16_check(const nnrt_conv_s16_params_t *params, int depthwise)
{
    if (params == NULL || params->multiplier == NULL || params->shift == NULL
        || !nnrt_conv_geom_valid(&params->geom, NULL, depthwise) || params->act_min < INT16_MIN
        || params->act_max > INT16_MAX || params->act_min > params->act_max) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = params->per_channel ? params->geom.output_c : 1;
    for (int32_t c = 0; c < n; ++c) {
        if (params->multiplier[c] < 0 || params->shift[c] < -31 || params->shift[c] > 7) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}
