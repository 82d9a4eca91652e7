/*
 * float32 ELU, TFLM's reference Elu: out = x < 0 ? expm1f(x) : x (TfLiteExpm1 is
 * std::expm1 on float). Element-wise, in place capable.
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_elu_f32, x < 0.0f ? expm1f(x) : x)
