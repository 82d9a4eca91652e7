/* QUANTIZE float32 -> int8 (TFLM reference_ops::AffineQuantize; internal/affine.h). */
#include "nnrt/kernels/quantize.h"
#include "../internal/affine.h"

NNRT_QUANTIZE_KERNEL(nnrt_quantize_f32_s8, int8_t, INT8_MIN, INT8_MAX)
