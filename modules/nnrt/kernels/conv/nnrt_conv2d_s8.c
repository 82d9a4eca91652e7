/*
 * int8 2-D convolution, NHWC input, OHWI filter, per-channel requantisation, with an
 * optional max pool folded into the output (see conv.h). Arithmetic of TFLM's
 * reference ConvPerChannel: taps outside the input are skipped, every tap adds
 * w * (x + input_offset) to an int32 accumulator.
 *
 * One group and no pool (the common case) runs nnrt_conv2d_opt_s8(); one group with a
 * fused pool the matrix core per pool window (internal/nnrt_conv_gemm_pool_s8.c, its
 * buffer on the stack) where that buffer fits NNRT_CONV_POOL_STACK_BYTES; these
 * reference loops serve grouped convolutions and the other fused pools.
 */
#include <stddef.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "../internal/conv_check.h"
#include "../internal/conv_gemm.h"
#include "../internal/conv_pixel.h"
#include "../internal/fused_pool.h"

nnrt_status_t nnrt_conv2d_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                             const int8_t *filter, const int32_t *bias, int8_t *output)
{
    if (!nnrt_conv_s8_args_ok(params, input, filter, output, 0)) {
        return NNRT_ERR_ARG;
    }
    const nnrt_conv_geom_t *g = &params->geom;
    const nnrt_conv_pool_t *pool = params->pool;
    if (pool == NULL && g->filter_c == g->input_c) {
        return nnrt_conv2d_opt_s8(params, input, filter, bias, output);
    }
    if (g->filter_c == g->input_c
        && nnrt_conv_gemm_pool_s8(params, input, filter, bias, output)) {
        return NNRT_OK;
    }
#define PIXEL(in_b, oy, ox, out, max)                                                   \
    nnrt_conv_pixel_s8(params, in_b, filter, bias, NULL, oy, ox, out, max)
#define CLAMP(out, c) out[c] = (int8_t)nnrt_clamp_i32(out[c], pool->act_min, pool->act_max)
    NNRT_CONV_POOL_DRIVE(int8_t, g, pool, input, output, INT8_MIN, PIXEL, CLAMP);
#undef PIXEL
#undef CLAMP
    return NNRT_OK;
}
