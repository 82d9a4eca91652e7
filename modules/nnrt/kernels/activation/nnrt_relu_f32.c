/* RELU float32 (TFLM ReluFloat). */
#include "nnrt/kernels/activation.h"
#include "../internal/unary.h"

NNRT_UNARY_F32_KERNEL(nnrt_relu_f32, x < 0.0f ? 0.0f : x)
