/*
 * float32 PRELU with a broadcast alpha, TFLM's BroadcastPrelu4DSlowFloat:
 * out = x >= 0 ? x : x * alpha. Walked through the build-time broadcast descriptor;
 * each element is written after its inputs are read (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/activation.h"
#include "../internal/binary.h"

#define PRELU(x, a) ((x) >= 0.0f ? (x) : (x) * (a))

nnrt_status_t nnrt_prelu_f32(const nnrt_broadcast_t *bcast, const float *input,
                             const float *alpha, float *output)
{
    if (bcast == NULL || input == NULL || alpha == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(float, b, input, alpha, output, PRELU);
    return NNRT_OK;
}
