/* QUANTIZE float32 -> int16 (TFLM reference_ops::AffineQuantize; internal/affine.h). */
#include "nnrt/kernels/quantize.h"
#include "../internal/affine.h"

NNRT_QUANTIZE_KERNEL(nnrt_quantize_f32_s16, int16_t, INT16_MIN, INT16_MAX)
