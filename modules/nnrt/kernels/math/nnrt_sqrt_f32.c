/* SQRT float32 (TFLM reference: element-wise sqrtf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_sqrt_f32, sqrtf(x))
