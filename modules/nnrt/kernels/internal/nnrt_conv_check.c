/* The shared argument checks of the int8 convolution kernels (internal/conv_check.h). */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "conv_check.h"
#include "simd.h"

NNRT_COLD int nnrt_conv_s8_args_ok(const nnrt_conv_s8_params_t *p, const int8_t *input,
                         const int8_t *filter, const int8_t *output, int depthwise)
{
    if (p == NULL || input == NULL || filter == NULL || output == NULL
        || p->multiplier == NULL || p->shift == NULL
        || !nnrt_conv_geom_valid(&p->geom, p->pool, depthwise)
        || p->act_min < INT8_MIN || p->act_max > INT8_MAX || p->act_min > p->act_max
        || p->output_offset < INT8_MIN || p->output_offset > INT8_MAX
        || p->input_offset < -INT8_MAX || p->input_offset > INT8_MAX + 1) {
        return 0;
    }
    const nnrt_conv_pool_t *pool = p->pool;
    if (pool != NULL && (pool->act_min < INT8_MIN || pool->act_max > INT8_MAX
                         || pool->act_min > pool->act_max)) {
        return 0;
    }
    return 1;
}
