/* bool REDUCE_ALL over any axes (TFLM's ReduceAll: logical AND from true; see reduce.h). */
#include <stddef.h>

#include "nnrt/kernels/reduce.h"
#include "../internal/reduce.h"

nnrt_status_t nnrt_reduce_all_b8(const nnrt_mean_geom_t *geom, const uint8_t *input,
                                 uint8_t *output)
{
    if (geom == NULL || input == NULL || output == NULL || !nnrt_reduce_geom_valid(geom)) {
        return NNRT_ERR_ARG;
    }
    NNRT_REDUCE(uint8_t, geom, input, output, 1u, NNRT_REDUCE_ALL_OP);
    return NNRT_OK;
}
