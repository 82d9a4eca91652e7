/* DEQUANTIZE int8 -> float32 (TFLM reference_ops::Dequantize; internal/affine.h). */
#include "nnrt/kernels/quantize.h"
#include "../internal/affine.h"

NNRT_DEQUANTIZE_KERNEL(nnrt_dequantize_s8_f32, int8_t, INT8_MIN, INT8_MAX)
