/*
 * float32 FLOOR_MOD with broadcasting, TFLM's reference FloorMod: r = fmodf(x, y), then
 * r + y where r is non-zero and its sign differs from y's. Each element is written after
 * its inputs are read (in place over a same-sized input).
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/binary.h"

static inline float floor_mod(float x, float y)
{
    const float r = fmodf(x, y);
    return (r != 0.0f && ((y < 0.0f) != (r < 0.0f))) ? r + y : r;
}

nnrt_status_t nnrt_floor_mod_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                 const float *input2, float *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(float, b, input1, input2, output, floor_mod);
    return NNRT_OK;
}
