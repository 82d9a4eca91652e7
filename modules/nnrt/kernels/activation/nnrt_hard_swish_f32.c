/* HARD_SWISH float32 (TFLM reference_ops::HardSwish<float>). */
#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

static inline float hard_swish(float v)
{
    const float shifted = v + 3.0f;
    const float lower = 0.0f < shifted ? shifted : 0.0f; /* max(0, v + 3) */
    const float relu6 = lower < 6.0f ? lower : 6.0f;     /* min(6, .) */
    return v * relu6 / 6.0f;
}

NNRT_UNARY_F32_KERNEL(nnrt_hard_swish_f32, hard_swish(x))
