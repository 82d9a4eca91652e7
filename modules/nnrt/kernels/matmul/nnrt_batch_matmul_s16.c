/*
 * int16 BATCH_MATMUL: TFLM's reference BatchMatMul<int16_t, int64_t> (matmul.h): the
 * products summed in int64, requantised by the 64-bit MultiplyByQuantizedMultiplier of
 * TFLM's common.h (multiplier rounded to 16 bits, one rounding shift).
 */
#include "nnrt/kernels/matmul.h"
#include "nnrt/kernels/quant.h"
#include "../internal/matmul_walk.h"

static inline int32_t requantize_s64(int64_t x, int32_t multiplier, int32_t shift)
{
    const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    const int64_t round = (int64_t)1 << (total_shift - 1);
    return (int32_t)((x * (int64_t)reduced + round) >> total_shift);
}

nnrt_status_t nnrt_batch_matmul_s16(const nnrt_batch_matmul_q_params_t *params,
                                    const int16_t *lhs, const int16_t *rhs, int16_t *output)
{
    if (params == NULL || lhs == NULL || rhs == NULL || output == NULL
        || !nnrt_matmul_shape_ok(&params->shape) || params->output_multiplier < 0
        || params->output_shift > 7 || params->output_shift < -31
        || params->act_min > params->act_max || params->act_min < INT16_MIN
        || params->act_max > INT16_MAX) {
        return NNRT_ERR_ARG;
    }
    const nnrt_matmul_shape_t *s = &params->shape;
    const ptrdiff_t ls = s->lhs_depth_stride;
    const ptrdiff_t rs = s->rhs_depth_stride;
    NNRT_MATMUL_WALK(int16_t, s, lhs, rhs, output, {
        int64_t total = 0;
        for (int32_t k = 0; k < s->depth; ++k) {
            total += ((int64_t)a[k * ls] + params->lhs_offset)
                     * ((int64_t)c[k * rs] + params->rhs_offset);
        }
        const int32_t v = requantize_s64(total, params->output_multiplier, params->output_shift)
                          + params->output_offset;
        out[j] = (int16_t)nnrt_clamp_i32(v, params->act_min, params->act_max);
    });
    return NNRT_OK;
}
