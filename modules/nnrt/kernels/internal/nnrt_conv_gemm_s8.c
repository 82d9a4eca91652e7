/*
 * The matrix-core convolution shared by nnrt_conv2d_im2col_s8() (its scratch) and
 * nnrt_conv2d_opt_s8() (no scratch: the columns go into the part of the output not
 * written yet), with run-time geometry. The body is internal/conv_gemm_body.h (also
 * instantiated by specialised generated code); see internal/gemm.h and conv.h.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

#include "conv_gemm.h"
#include "conv_gemm_body.h"
#include "gemm.h"
#include "simd.h"

static NNRT_NOINLINE int pointwise(const nnrt_conv_geom_t *g)
{
    return nnrt_conv_pointwise(g);
}

NNRT_COLD size_t nnrt_conv_gemm_bytes(const nnrt_conv_geom_t *g)
{
    return nnrt_conv_gemm_bytes_body(g, pointwise(g));
}

size_t nnrt_conv_gemm_s8(const nnrt_conv_s8_params_t *params, const int8_t *input,
                         const int8_t *filter, const int32_t *bias, int8_t *output,
                         void *scratch, size_t from)
{
    const nnrt_conv_geom_t *g = &params->geom;
    nnrt_gemm_s8_t mm = {
        g->filter_h * g->filter_w * g->input_c, g->output_c, filter, bias,
        params->multiplier, params->shift, params->per_channel, params->output_offset,
        params->act_min, params->act_max, 0, NULL NNRT_GEMM_BIAS_OFF(NULL),
    };
    mm.stage = nnrt_gemm_s8_stage(&mm);
    return nnrt_conv_gemm_body(params, &mm, input, output, scratch, nnrt_gemm_s8_2px, 0,
                               nnrt_conv_gemm_bytes(g), pointwise(g), from);
}
