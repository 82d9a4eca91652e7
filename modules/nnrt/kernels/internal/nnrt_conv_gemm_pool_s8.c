/*
 * A one-group int8 convolution with a fused max pool through the matrix core of
 * nnrt_conv_gemm_s8() (internal/conv_gemm_body.h): for each pool output, the conv
 * pixels of its window (nnrt_pool_window() of internal/fused_pool.h) are
 * staged and converted two at a time, the 2-pixel core writes their requantised,
 * clamped outputs into a stack buffer, and each is max-merged into the pooled output,
 * which starts at INT8_MIN and is clamped to the pool's activation range at the end:
 * the values of the reference loops of nnrt_conv2d_s8() (the maximum of the same conv
 * outputs). The buffer (columns, int8 staging copy, two pixels' outputs) lives on the
 * stack so that the kernel keeps needing no scratch (a fused pool is a memory plan:
 * conv.h); geometries whose buffer exceeds NNRT_CONV_POOL_STACK_BYTES are refused.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/quant.h"

#include "conv_gemm.h"
#include "conv_gemm_body.h"
#include "fused_pool.h"
#include "gemm.h"
#include "simd.h"

/* out[c] = max(out[c], px[c]) for the oc channels. */
static void merge_max(int8_t *out, const int8_t *px, size_t oc)
{
    for (size_t c = 0; c < oc; ++c) {
        out[c] = px[c] > out[c] ? px[c] : out[c];
    }
}

/* The conv pixels [0, n) of one pool window (row-major over its ww columns, from conv
 * pixel (y0, x0)), two at a time, max-merged into out[0..oc). */
static void pool_window(const nnrt_conv_s8_params_t *params, const nnrt_gemm_s8_t *mm,
                        const int8_t *in_b, int32_t y0, int32_t x0, int32_t ww, int32_t n,
                        uint8_t *buf, int8_t *out)
{
    const int32_t k = mm->k;
    const size_t oc = (size_t)mm->oc;
    int8_t *stage = (int8_t *)(buf + NNRT_GEMM_COLS_BYTES(k));
    int8_t *px = stage + ((k + 3) & ~3);
    for (int32_t i = 0; i < n; i += 2) {
        const int pair2 = i + 1 < n;
        for (int32_t p = 0; p < 2; ++p) {
            if (p == 0 || pair2) { /* pixel 1 of a lone pixel repeats pixel 0 */
                nnrt_conv_stage_patch(&params->geom, params->input_offset, in_b,
                                      y0 + (i + p) / ww, x0 + (i + p) % ww, stage);
            }
            nnrt_cols_put_s8(buf, k, p, 0, stage, k, params->input_offset);
        }
        nnrt_gemm_s8_2px(mm, buf, px, pair2 ? px + oc : NULL);
        merge_max(out, px, oc);
        if (pair2) {
            merge_max(out, px + oc, oc);
        }
    }
}

NNRT_NOINLINE int nnrt_conv_gemm_pool_s8(const nnrt_conv_s8_params_t *params,
                                         const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, int8_t *output)
{
    const nnrt_conv_geom_t *g = &params->geom;
    const nnrt_conv_pool_t *pool = params->pool;
    const int64_t k = (int64_t)g->filter_h * g->filter_w * g->input_c;
    const int64_t need = (int64_t)NNRT_GEMM_COLS_BYTES(k) + ((k + 3) & ~3)
                         + 2 * (int64_t)g->output_c;
    if (need > NNRT_CONV_POOL_STACK_BYTES) {
        return 0;
    }
    uint32_t buf[NNRT_CONV_POOL_STACK_BYTES / 4]; /* 4-byte aligned columns */
    nnrt_gemm_s8_t mm = {
        (int32_t)k, g->output_c, filter, bias, params->multiplier, params->shift,
        params->per_channel, params->output_offset, params->act_min, params->act_max, 0,
        NULL NNRT_GEMM_BIAS_OFF(NULL),
    };
    mm.stage = nnrt_gemm_s8_stage(&mm);
    const size_t oc = (size_t)g->output_c;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;

    for (int32_t b = 0; b < g->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * in_batch;
        for (int32_t py = 0; py < pool->output_h; ++py) {
            int32_t wy_s, wy_e;
            nnrt_pool_window(py, pool->stride_h, pool->pad_top, pool->filter_h, g->output_h,
                             &wy_s, &wy_e);
            for (int32_t px = 0; px < pool->output_w; ++px) {
                int32_t wx_s, wx_e;
                nnrt_pool_window(px, pool->stride_w, pool->pad_left, pool->filter_w,
                                 g->output_w, &wx_s, &wx_e);
                for (size_t c = 0; c < oc; ++c) {
                    output[c] = INT8_MIN;
                }
                pool_window(params, &mm, in_b, wy_s, wx_s, wx_e - wx_s,
                            (wy_e - wy_s) * (wx_e - wx_s), (uint8_t *)buf, output);
                for (size_t c = 0; c < oc; ++c) {
                    output[c] = (int8_t)nnrt_clamp_i32(output[c], pool->act_min,
                                                       pool->act_max);
                }
                output += oc;
            }
        }
    }
    return 1;
}
