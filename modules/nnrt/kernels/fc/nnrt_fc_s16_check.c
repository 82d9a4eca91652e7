/*
 * The exported argument check of nnrt_fully_connected_s16() (fc.h): the conditions the
 * kernel tests on every call, on the parameters alone, for callers that check before
 * they run (the generated <model>_prepare(), the model loader). Its own file, as every
 * check.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"

nnrt_status_t nnrt_fc_s16_check(const nnrt_fc_s16_params_t *params)
{
    if (params == NULL || params->multiplier == NULL || params->shift == NULL
        || params->batches < 1 || params->accum_depth < 1 || params->output_depth < 1
        || params->act_min < INT16_MIN || params->act_max > INT16_MAX
        || params->act_min > params->act_max || params->weights_offset < -INT8_MAX
        || params->weights_offset > INT8_MAX + 1) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = params->per_channel ? params->output_depth : 1;
    for (int32_t c = 0; c < n; ++c) {
        if (params->multiplier[c] < 0 || params->shift[c] < -31 || params->shift[c] > 7) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}
