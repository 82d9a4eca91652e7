/* LOG float32 (TFLM reference: element-wise logf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_log_f32, logf(x))
