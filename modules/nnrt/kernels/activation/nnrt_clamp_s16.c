/* RELU6 int16 (TFLM reference Relu6Quantized<int16_t>; internal/leaky_relu.h). */
#include "../internal/leaky_relu.h"

NNRT_CLAMP_KERNEL(nnrt_clamp_s16, int16_t, NNRT_CLAMP_S16_ARGS_BAD)
