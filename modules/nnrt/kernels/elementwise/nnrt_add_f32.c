/*
 * float32 ADD with broadcasting and fused activation.
 * out = min(max(in1 + in2, act_min), act_max).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "../internal/binary.h"

static inline float apply(const nnrt_binary_f32_params_t *p, float x1, float x2)
{
    /* std::min(std::max(x, lo), hi), with the comparisons of the C++ library. */
    const float x = x1 + x2;
    const float lo = x < p->act_min ? p->act_min : x;
    return p->act_max < lo ? p->act_max : lo;
}

nnrt_status_t nnrt_add_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_binary_f32_params_ok(params)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = &params->bcast;
#define OP(x1, x2) apply(params, x1, x2)
    NNRT_BINARY_ELEMENTS(float, b, input1, input2, output, OP);
#undef OP
    return NNRT_OK;
}
