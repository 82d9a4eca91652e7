/* DEQUANTIZE uint8 -> float32 (TFLM reference_ops::Dequantize; internal/affine.h). */
#include "nnrt/kernels/quantize.h"
#include "../internal/affine.h"

NNRT_DEQUANTIZE_KERNEL(nnrt_dequantize_u8_f32, uint8_t, 0, UINT8_MAX)
