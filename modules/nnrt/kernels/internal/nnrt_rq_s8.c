/* The reference requantisation, out of line (internal/requant.h). */
#include <stdint.h>

#include "nnrt/kernels/quant.h"

#include "requant.h"
#include "simd.h"

NNRT_COLD int32_t nnrt_rq_ref(int32_t acc, int32_t mult, int32_t shift, int32_t out_off)
{
    return (int32_t)((uint32_t)nnrt_multiply_by_quantized_multiplier(acc, mult, shift)
                     + (uint32_t)out_off);
}
