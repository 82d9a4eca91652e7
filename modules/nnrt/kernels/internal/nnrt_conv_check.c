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
        || NNRT_CONV_S8_PARAMS_BAD(p, depthwise)) {
        return 0;
    }
    const nnrt_conv_pool_t *pool = p->pool;
    if (NNRT_CONV_S8_POOL_BAD(pool)) {
        return 0;
    }
    return 1;
}
