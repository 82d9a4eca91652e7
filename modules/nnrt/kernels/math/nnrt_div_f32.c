/*
 * float32 DIV with broadcasting and fused activation.
 * out = min(max(in1 / in2, act_min), act_max).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/math.h"

static inline float apply(const nnrt_binary_f32_params_t *p, float x1, float x2)
{
    /* std::min(std::max(x, lo), hi), with the comparisons of the C++ library. */
    const float x = x1 / x2;
    const float lo = x < p->act_min ? p->act_min : x;
    return p->act_max < lo ? p->act_max : lo;
}

nnrt_status_t nnrt_div_f32(const nnrt_binary_f32_params_t *params, const float *input1,
                           const float *input2, float *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(&params->bcast)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_broadcast_t *b = &params->bcast;
    const int32_t last = b->rank - 1;
    const int32_t n = b->dims[last];
    const ptrdiff_t s1 = b->stride1[last];
    const ptrdiff_t s2 = b->stride2[last];
    int32_t idx[NNRT_MAX_DIMS] = {0};
    ptrdiff_t off1 = 0;
    ptrdiff_t off2 = 0;
    do {
        const float *a = input1 + off1;
        const float *c = input2 + off2;
        for (int32_t i = 0; i < n; ++i) {
            output[i] = apply(params, a[i * s1], c[i * s2]);
        }
        output += n;
    } while (nnrt_broadcast_next_row(b, idx, &off1, &off2));
    return NNRT_OK;
}
