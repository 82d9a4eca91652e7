/*
 * RESIZE_BILINEAR int8, as TFLM's reference ResizeBilinearInteger: each output value
 * blends four input pixels with weights in 1/1024 units (products in 1/2^20 units), then
 * rounds half away from zero (round_q20). The source rows/columns and their fractions
 * come from build-time tables (nnopt.lowering.resize), the walk is
 * internal/resize_bilinear.h; the 32-bit accumulator is exact because
 * every fraction is in [-1024, 1024] (checked here and by the lowering), so
 * |w_lower| + |w_upper| <= 3072 along each axis and |acc| <= 128 * 3072^2 < 2^31.
 */
#include <stddef.h>

#include "nnrt/kernels/resize.h"

#include "../internal/resize_bilinear.h"

/*
 * TFLM's (acc + (acc > 0 ? 2^19 : -2^19)) / 2^20 (C division, toward zero) without the
 * branch: for acc > 0 that is floor((acc + 2^19) / 2^20); for acc <= 0 it is
 * ceil((acc - 2^19) / 2^20) = floor((acc + 2^19 - 1) / 2^20). Both are
 * (acc + 2^19 - 1 + (acc > 0)) >> 20 (arithmetic shift: floor); no overflow, as
 * |acc| <= 128 * 3072^2 < 2^31 - 2^19.
 */
static inline int32_t round_q20(int32_t acc)
{
    return (acc + ((1 << 19) - 1) + (acc > 0 ? 1 : 0)) >> 20;
}

static int fracs_ok(const int32_t *frac, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        if (frac[i] < -1024 || frac[i] > 1024) {
            return 0;
        }
    }
    return 1;
}

nnrt_status_t nnrt_resize_bilinear_s8(const nnrt_resize_bilinear_s8_params_t *params,
                                      const int8_t *input, int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL || params->row_frac == NULL
        || params->col_frac == NULL || nnrt_resize_bilinear_check(&params->shape) != NNRT_OK
        || !fracs_ok(params->row_frac, params->shape.output_h)
        || !fracs_ok(params->col_frac, params->shape.output_w)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_resize_bilinear_shape_t *s = &params->shape;
    const int32_t *rf = params->row_frac;
    const int32_t *cf = params->col_frac;
    int8_t *out = output;
    int32_t fy = 0;
    int32_t gy = 0;
#define ROW(y)                                                                              \
    do {                                                                                    \
        fy = rf[(y)];                                                                       \
        gy = 1024 - fy;                                                                     \
    } while (0)
#define PIXEL(x, p00, p10, p01, p11, o, depth)                                              \
    do {                                                                                    \
        const int32_t fx = cf[(x)];                                                         \
        const int32_t gx = 1024 - fx;                                                       \
        const int32_t w00 = gy * gx;                                                        \
        const int32_t w10 = fy * gx;                                                        \
        const int32_t w01 = gy * fx;                                                        \
        const int32_t w11 = fy * fx;                                                        \
        for (size_t c = 0; c < (depth); ++c) {                                              \
            const int32_t acc = (int32_t)(p00)[c] * w00 + (int32_t)(p10)[c] * w10           \
                                + (int32_t)(p01)[c] * w01 + (int32_t)(p11)[c] * w11;        \
            (o)[c] = (int8_t)round_q20(acc);                                                \
        }                                                                                   \
    } while (0)
    NNRT_RESIZE_BILINEAR_DRIVE(int8_t, s, input, out, ROW, PIXEL);
#undef PIXEL
#undef ROW
    return NNRT_OK;
}
