/* LOGISTIC float32 (TFLM reference_ops::Logistic, with its cutoffs). */
#include <math.h>

#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

static inline float logistic(float v)
{
    const float cutoff_upper = 16.619047164916992188f;
    const float cutoff_lower = -9.0f;
    float r;
    if (v > cutoff_upper) {
        r = 1.0f;
    } else if (v < cutoff_lower) {
        r = expf(v);
    } else {
        r = 1.0f / (1.0f + expf(-v));
    }
    return r;
}

NNRT_UNARY_F32_KERNEL(nnrt_logistic_f32, logistic(x))
