/*
 * int8 BATCH_MATMUL: TFLM's reference BatchMatMul<int8_t, int32_t> (matmul.h).
 */
#include "nnrt/kernels/matmul.h"
#include "nnrt/kernels/quant.h"
#include "../internal/matmul_walk.h"

nnrt_status_t nnrt_batch_matmul_s8(const nnrt_batch_matmul_q_params_t *params,
                                   const int8_t *lhs, const int8_t *rhs, int8_t *output)
{
    if (params == NULL || lhs == NULL || rhs == NULL || output == NULL
        || !nnrt_matmul_shape_ok(&params->shape) || params->output_shift > 30
        || params->output_shift < -31 || params->act_min > params->act_max
        || params->act_min < INT8_MIN || params->act_max > INT8_MAX) {
        return NNRT_ERR_ARG;
    }
    const nnrt_matmul_shape_t *s = &params->shape;
    const ptrdiff_t ls = s->lhs_depth_stride;
    const ptrdiff_t rs = s->rhs_depth_stride;
    NNRT_MATMUL_WALK(int8_t, s, lhs, rhs, output, {
        int32_t total = 0;
        for (int32_t k = 0; k < s->depth; ++k) {
            total += (a[k * ls] + params->lhs_offset) * (c[k * rs] + params->rhs_offset);
        }
        const int32_t v = nnrt_multiply_by_quantized_multiplier(
                              total, params->output_multiplier, params->output_shift)
                          + params->output_offset;
        out[j] = (int8_t)nnrt_clamp_i32(v, params->act_min, params->act_max);
    });
    return NNRT_OK;
}
