/* RELU6 float32 (TFLM Relu6Float). */
#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_relu6_f32, x > 6.0f ? 6.0f : (x < 0.0f ? 0.0f : x))
