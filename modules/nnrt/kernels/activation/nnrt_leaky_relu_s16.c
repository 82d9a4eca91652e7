/* LEAKY_RELU int16 (TFLM reference QuantizeLeakyRelu; internal/leaky_relu.h). */
#include "../internal/leaky_relu.h"

NNRT_LEAKY_RELU_KERNEL(nnrt_leaky_relu_s16, int16_t, INT16_MIN, INT16_MAX)
