/* RSQRT float32 (TFLM reference: element-wise 1.0f / sqrtf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_rsqrt_f32, 1.0f / sqrtf(x))
