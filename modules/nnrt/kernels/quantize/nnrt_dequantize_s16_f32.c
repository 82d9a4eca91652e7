/* DEQUANTIZE int16 -> float32 (TFLM reference_ops::Dequantize; internal/affine.h). */
#include "nnrt/kernels/quantize.h"
#include "../internal/affine.h"

NNRT_DEQUANTIZE_KERNEL(nnrt_dequantize_s16_f32, int16_t, INT16_MIN, INT16_MAX)
