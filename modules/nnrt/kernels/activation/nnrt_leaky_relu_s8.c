/* LEAKY_RELU int8 (TFLM reference QuantizeLeakyRelu; internal/leaky_relu.h). */
#include "../internal/leaky_relu.h"

NNRT_LEAKY_RELU_KERNEL(nnrt_leaky_relu_s8, int8_t, INT8_MIN, INT8_MAX)
