/*
 * float32 MEAN over any axes, TFLM's reference Mean: for each output, the reduced
 * elements are summed in increasing input address order starting from 0.0f, then the
 * sum is divided by the element count converted to float (internal/mean.h).
 */
#include <stddef.h>

#include "nnrt/kernels/pool.h"
#include "../internal/mean.h"

NNRT_MEAN_SUM_FN(reduce_sum, float, float, 0.0f)

nnrt_status_t nnrt_mean_f32(const nnrt_mean_geom_t *geom, const float *input, float *output)
{
    if (geom == NULL || input == NULL || output == NULL || !nnrt_reduce_geom_valid(geom)) {
        return NNRT_ERR_ARG;
    }
    int32_t count = 1;
    for (int32_t d = 0; d < geom->reduce_rank; ++d) {
        count *= geom->reduce_dims[d];
    }
    const float fcount = (float)count;
    NNRT_MEAN_WALK(float, geom, input, output, *output++ = reduce_sum(geom, base) / fcount);
}
