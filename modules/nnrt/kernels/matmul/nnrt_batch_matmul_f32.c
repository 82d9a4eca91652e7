/*
 * float32 BATCH_MATMUL: TFLM's reference BatchMatMul<float> (matmul.h): one float
 * accumulator per output element, the products added in ascending depth order.
 */
#include "nnrt/kernels/matmul.h"
#include "../internal/matmul_walk.h"

nnrt_status_t nnrt_batch_matmul_f32(const nnrt_matmul_shape_t *shape, const float *lhs,
                                    const float *rhs, float *output)
{
    if (shape == NULL || lhs == NULL || rhs == NULL || output == NULL
        || !nnrt_matmul_shape_ok(shape)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_matmul_shape_t *s = shape;
    const ptrdiff_t ls = s->lhs_depth_stride;
    const ptrdiff_t rs = s->rhs_depth_stride;
    NNRT_MATMUL_WALK(float, s, lhs, rhs, output, {
        float total = 0.0f;
        for (int32_t k = 0; k < s->depth; ++k) {
            total += a[k * ls] * c[k * rs];
        }
        out[j] = total;
    });
    return NNRT_OK;
}
