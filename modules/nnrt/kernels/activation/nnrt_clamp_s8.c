/* RELU6 int8 (TFLM reference Relu6Quantized), and RELU int8 without requantisation. */
#include "../internal/leaky_relu.h"

NNRT_CLAMP_KERNEL(nnrt_clamp_s8, int8_t, NNRT_CLAMP_S8_ARGS_BAD)
