/*
 * Internal to the nnrt kernels: the body of the matrix-core convolution
 * (internal/conv_gemm.h) as inline functions, the one source of the generic
 * nnrt_conv_gemm_s8() (internal/nnrt_conv_gemm_s8.c, run-time geometry) and of the
 * specialised functions code generation emits (nnrt/kernels/spec.h: the same body
 * with a `static const` nnrt_conv_s8_params_t, so the geometry, padding and offsets
 * fold into constants).
 *
 * For two output pixels at a time, their [KH, KW, C] input patches are copied as int8
 * into a staging area (kernel rows with memcpy, padding as the input zero point, which
 * the offset turns into 0; a 1x1 filter without padding reads the input pixel itself),
 * converted in one aligned pass into the int16 columns of the matrix core and
 * multiplied with the [OC, KH*KW*C] filter. Where C is a multiple of 4 (and the filter
 * is not dilated horizontally) the kernel rows of a patch inside the input are converted
 * straight from the input, without the staging copy (nnrt_conv_cols_direct()).
 * Bit-exact with TFLM's reference convolution (a padding tap adds w * 0, TFLM skips it:
 * the same sum).
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_GEMM_BODY_H_
#define NNRT_KERNELS_INTERNAL_CONV_GEMM_BODY_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/conv.h"

#include "conv_gemm.h"
#include "gemm.h"
#include "gemm_body.h"
#include "simd.h"

/* The int8 patch of output pixel (oy, ox) into stage[k], padding as -in_off. */
static inline void nnrt_conv_stage_patch(const nnrt_conv_geom_t *g, int32_t in_off,
                                         const int8_t *in_b, int32_t oy, int32_t ox,
                                         int8_t *stage)
{
    const size_t c = (size_t)g->input_c;
    const size_t row = (size_t)g->filter_w * c;
    const int pad = -in_off; /* the input zero point: x + in_off == 0 */
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    for (int32_t fy = 0; fy < g->filter_h; ++fy, stage += row) {
        const int32_t y = y0 + fy * g->dilation_h;
        if (y < 0 || y >= g->input_h) {
            memset(stage, pad, row);
            continue;
        }
        const int8_t *in_row = in_b + (size_t)y * (size_t)g->input_w * c;
        if (g->dilation_w == 1 && x0 >= 0 && x0 + g->filter_w <= g->input_w) {
            memcpy(stage, in_row + (size_t)x0 * c, row);
            continue;
        }
        for (int32_t fx = 0; fx < g->filter_w; ++fx) {
            const int32_t x = x0 + fx * g->dilation_w;
            if (x < 0 || x >= g->input_w) {
                memset(stage + (size_t)fx * c, pad, c);
            } else {
                memcpy(stage + (size_t)fx * c, in_row + (size_t)x * c, c);
            }
        }
    }
}

/*
 * The columns of pixel p (output pixel (oy, ox), in_b: its batch's input) converted
 * straight from the input, one kernel row at a time, where the patch lies inside the
 * input (returns 0, nothing written, where it does not), the input depth is a multiple
 * of 4 and the filter is not dilated horizontally: every kernel row is then a run of
 * the input starting at a whole chunk of the columns. No int8 staging copy (a memcpy per
 * kernel row, then the conversion of the copy).
 */
static NNRT_ALWAYS_INLINE int nnrt_conv_cols_direct(const nnrt_conv_geom_t *g, int32_t in_off,
                                                    const int8_t *in_b, int32_t oy,
                                                    int32_t ox, void *cols, int32_t k,
                                                    int32_t p, int cols_inline)
{
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    if (y0 < 0 || y0 + (g->filter_h - 1) * g->dilation_h >= g->input_h || x0 < 0
        || x0 + g->filter_w > g->input_w) {
        return 0;
    }
    const int32_t row = g->filter_w * g->input_c;
    const size_t in_row = (size_t)g->input_w * (size_t)g->input_c;
    const int8_t *src = in_b + (size_t)y0 * in_row + (size_t)x0 * (size_t)g->input_c;
    for (int32_t fy = 0; fy < g->filter_h; ++fy) {
        const int8_t *x = src + (size_t)(fy * g->dilation_h) * in_row;
        if (cols_inline) {
            nnrt_cols_put_body(cols, k, p, fy * row, x, row, in_off);
        } else {
            nnrt_cols_put_s8(cols, k, p, fy * row, x, row, in_off);
        }
    }
    return 1;
}

#if NNRT_DSP && !NNRT_MVE
/* Whether nnrt_conv_cols_c3k3() takes the geometry: a 3x3 filter over 3 channels (an
 * image's first convolution), not dilated horizontally. */
#define NNRT_CONV_C3K3(g)                                                                     \
    ((g)->input_c == 3 && (g)->filter_h == 3 && (g)->filter_w == 3 && (g)->dilation_w == 1)

/*
 * The columns of pixel p of a NNRT_CONV_C3K3() geometry straight from the input where
 * its patch lies inside it (returns 0, nothing written, where it does not): the three
 * kernel rows of 9 bytes each are depth positions 0-8, 9-17, 18-26, so the seven words
 * of the column (positions 4j .. 4j + 3; the 28th position's byte 0, read against a
 * weight of 0 or not at all) are whole or joined from two rows (a byte insert, a PKHTB,
 * a shift), then 2 SXTAB16 and one STRD a word. No staging copy (three 9-byte
 * copies and a conversion of them, about 90 instructions a pixel on the M7; this about
 * 35). The loads at r1 - 1 and r2 - 2 read bytes before rows 1 and 2 of the patch:
 * inside the input (those rows are not its first), masked off; none reads past row 2.
 */
static NNRT_ALWAYS_INLINE int nnrt_conv_cols_c3k3(const nnrt_conv_geom_t *g, int32_t in_off,
                                                  const int8_t *in_b, int32_t oy, int32_t ox,
                                                  void *cols, int32_t p)
{
    const int32_t y0 = oy * g->stride_h - g->pad_top;
    const int32_t x0 = ox * g->stride_w - g->pad_left;
    if (y0 < 0 || y0 + 2 * g->dilation_h >= g->input_h || x0 < 0 || x0 + 3 > g->input_w) {
        return 0;
    }
    const size_t step = (size_t)g->dilation_h * (size_t)g->input_w * 3u;
    const int8_t *r0 = in_b + ((size_t)y0 * (size_t)g->input_w + (size_t)x0) * 3u;
    const int8_t *r1 = r0 + step;
    const int8_t *r2 = r1 + step;
    const uint32_t off2 = nnrt_pair16(in_off);
    uint8_t *dst = (uint8_t *)cols + 8 * (size_t)p; /* 4-byte aligned, as STRD needs */
#define NNRT_C3K3_WORD(j, v)                                                                  \
    do {                                                                                      \
        const uint32_t v_ = (v);                                                              \
        const uint32_t e_ = __sxtab16(off2, v_);                                              \
        const uint32_t o_ = nnrt_sxtab16_ror8(off2, v_);                                      \
        __asm__("strd %1, %2, [%0, %3]" : : "r"(dst), "r"(e_), "r"(o_), "i"(16 * (j))       \
                : "memory");                                                                  \
    } while (0)
    NNRT_C3K3_WORD(0, nnrt_ld32(r0));
    NNRT_C3K3_WORD(1, nnrt_ld32(r0 + 4));
    NNRT_C3K3_WORD(2, (uint32_t)(uint8_t)r0[8] | (nnrt_ld32(r1 - 1) & 0xFFFFFF00u));
    NNRT_C3K3_WORD(3, nnrt_ld32(r1 + 3));
    NNRT_C3K3_WORD(4, nnrt_pkh_tops(nnrt_ld32(r1 + 5), nnrt_ld32(r2 - 2)));
    NNRT_C3K3_WORD(5, nnrt_ld32(r2 + 2));
    NNRT_C3K3_WORD(6, nnrt_ld32(r2 + 5) >> 8);
#undef NNRT_C3K3_WORD
    return 1;
}
#endif

/* A 1x1 filter without padding whose pixels all lie inside the input: every pixel's
 * column is its input vector, no staging. */
static inline int nnrt_conv_pointwise(const nnrt_conv_geom_t *g)
{
    return g->filter_h == 1 && g->filter_w == 1 && g->pad_top == 0 && g->pad_left == 0
           && (int64_t)(g->output_h - 1) * g->stride_h < g->input_h
           && (int64_t)(g->output_w - 1) * g->stride_w < g->input_w;
}

/* nnrt_conv_gemm_bytes() (conv_gemm.h); one = nnrt_conv_pointwise(g). */
static inline size_t nnrt_conv_gemm_bytes_body(const nnrt_conv_geom_t *g, int one)
{
    const int64_t k = (int64_t)g->filter_h * g->filter_w * g->input_c;
    return NNRT_GEMM_COLS_BYTES(k) + (one ? 0u : (size_t)((k + 3) & ~3));
}

/*
 * nnrt_conv_gemm_s8() (conv_gemm.h) from output pixel `from` on, for the core mm (its
 * filter, bias and output stage: the caller's, run-time or constant) with each pixel
 * pair's outputs computed by px2() (nnrt_gemm_s8_2px(), or a specialised instance of
 * nnrt_gemm_2px_body()); cols_inline: 1 converts the columns inline (a specialised
 * caller: the depth is a constant), 0 through nnrt_cols_put_s8(); need =
 * nnrt_conv_gemm_bytes_body(g, one) and one = nnrt_conv_pointwise(g), from the caller
 * (out of line in the generic core).
 */
static NNRT_ALWAYS_INLINE size_t nnrt_conv_gemm_body(const nnrt_conv_s8_params_t *params,
                                                     const nnrt_gemm_s8_t *mm,
                                                     const int8_t *input, int8_t *output,
                                                     void *scratch, nnrt_gemm_2px_fn px2,
                                                     int cols_inline, size_t need, int one,
                                                     size_t from)
{
    const nnrt_conv_geom_t *g = &params->geom;
    const int32_t k = g->filter_h * g->filter_w * g->input_c;
    const size_t in_batch = (size_t)g->input_h * (size_t)g->input_w * (size_t)g->input_c;
    const size_t oc = (size_t)g->output_c;
    const size_t per_batch = (size_t)g->output_h * (size_t)g->output_w;
    const size_t pixels = (size_t)g->batches * per_batch;
    /* im2col straight from the input where every kernel row starts a whole chunk */
    const int direct = !one && (g->input_c & 3) == 0 && g->dilation_w == 1;
#if NNRT_DSP && !NNRT_MVE
    /* an image's first 3x3 convolution, specialised: its columns joined from the rows */
    const int c3k3 = cols_inline && NNRT_CONV_C3K3(g);
#endif
    int32_t b = 0;
    int32_t oy = 0;
    int32_t ox = 0;
    if (from != 0) {
        b = (int32_t)(from / per_batch);
        oy = (int32_t)(from % per_batch / (size_t)g->output_w);
        ox = (int32_t)(from % (size_t)g->output_w);
    }

    for (size_t q = from; q < pixels; q += 2) {
        const int pair2 = q + 1 < pixels;
        void *cols = scratch;
        if (cols == NULL) {
            /* the output bytes after this pair's, 4-byte aligned, if they fit */
            size_t at = (q + 2) * oc;
            at += (4u - (((uintptr_t)output + at) & 3u)) & 3u;
            if (at + need > pixels * oc) {
                return q;
            }
            cols = output + at;
        }
        int8_t *stage = (int8_t *)cols + NNRT_GEMM_COLS_BYTES(k);
        for (int p = 0; p < 2; ++p) {
            const int8_t *in_b = input + (size_t)b * in_batch;
            const int8_t *src = stage;
            int joined = 0; /* the columns written by nnrt_conv_cols_c3k3() */
#if NNRT_DSP && !NNRT_MVE
            joined = c3k3 && nnrt_conv_cols_c3k3(g, params->input_offset, in_b, oy, ox, cols, p);
#endif
            if (!joined && (!direct || !nnrt_conv_cols_direct(g, params->input_offset, in_b,
                                                              oy, ox, cols, k, p,
                                                              cols_inline))) {
                if (one) {
                    src = in_b + ((size_t)oy * (size_t)g->stride_h * (size_t)g->input_w
                                  + (size_t)ox * (size_t)g->stride_w) * (size_t)g->input_c;
                } else {
                    nnrt_conv_stage_patch(g, params->input_offset, in_b, oy, ox, stage);
                }
                if (cols_inline && !one) { /* the staging area: (k + 3) & ~3 bytes */
                    /* the core's depth: k, or k rounded up to whole chunks where its pair
                     * rows are padded with zero weights (lowering/gemm_pairs.py
                     * padded_depth()); the columns of every build laid out with it */
                    nnrt_cols_put_padded_body(cols, mm->k, p, stage, params->input_offset);
                } else if (cols_inline) {
                    nnrt_cols_put_body(cols, k, p, 0, src, k, params->input_offset);
                } else {
                    nnrt_cols_put_s8(cols, k, p, 0, src, k, params->input_offset);
                }
            }
            if (p == 0 && !pair2) {
                continue; /* pixel 1 repeats pixel 0: its outputs are not stored */
            }
            if (++ox == g->output_w) {
                ox = 0;
                if (++oy == g->output_h) {
                    oy = 0;
                    ++b;
                }
            }
        }
        px2(mm, cols, output + q * oc, pair2 ? output + (q + 1) * oc : NULL);
    }
    return pixels;
}

#endif /* NNRT_KERNELS_INTERNAL_CONV_GEMM_BODY_H_ */
