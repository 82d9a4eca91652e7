/* ABS float32 (TFLM reference: element-wise fabsf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_abs_f32, fabsf(x))
