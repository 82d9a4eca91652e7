/* EXP float32 (TFLM reference: element-wise expf(x)). */
#include <math.h>

#include "nnrt/kernels/math.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_exp_f32, expf(x))
