/* NEG float32 (TFLM reference: element-wise -x). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_neg_f32, -x)
