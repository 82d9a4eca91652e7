/* int8 REDUCE_MIN over any axes (TFLM's reference ReduceGeneric; see reduce.h). */
#include <float.h>
#include <stddef.h>

#include "nnrt/kernels/reduce.h"
#include "../internal/reduce.h"

nnrt_status_t nnrt_reduce_min_s8(const nnrt_mean_geom_t *geom, const int8_t *input, int8_t *output)
{
    if (geom == NULL || input == NULL || output == NULL || !nnrt_reduce_geom_valid(geom)) {
        return NNRT_ERR_ARG;
    }
    NNRT_REDUCE(int8_t, geom, input, output, INT8_MAX, NNRT_REDUCE_MIN_OP);
    return NNRT_OK;
}
