/* Argument checks of the layout and resize kernels: each bad descriptor is refused
 * with NNRT_ERR_ARG before any byte is written; a good one copies what it should. */
#include <stdio.h>
#include <string.h>

#include "nnrt/kernels/resize.h"
#include "nnrt/kernels/shape.h"

int main(void)
{
    int fails = 0;
    int8_t in[16];
    int8_t out[64];
    for (int i = 0; i < 16; ++i) {
        in[i] = (int8_t)(i - 8);
    }
    /* gather_axes: a reversed 4-element row (table steps backwards: element copies) */
    const int32_t rev[4] = {3, 2, 1, 0};
    nnrt_gather_axes_params_t g = {1, 1, {4}, rev};
    memset(out, 0, sizeof out);
    if (nnrt_gather_axes_x8(&g, in, out) != NNRT_OK || out[0] != -5 || out[3] != -8) {
        fails++;
    }
    const int32_t neg[2] = {0, -1};
    nnrt_gather_axes_params_t gn = {1, 1, {2}, neg};  /* negative offset */
    if (nnrt_gather_axes_x8(&gn, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    nnrt_gather_axes_params_t gr = {0, 1, {1}, rev};  /* rank 0 */
    if (nnrt_gather_axes_x8(&gr, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    /* space_to_batch: pad byte out of range, then a zero block */
    nnrt_space_to_batch_params_t sb = {1, 2, 2, 1, 1, 2, 2, 0, 0, 1, 256};
    if (nnrt_space_to_batch_x8(&sb, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    sb.pad_byte = 0;
    sb.block_w = 0;
    if (nnrt_space_to_batch_x8(&sb, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    /* resize bilinear: a source row past the input, then a fraction out of range */
    const int32_t rows_bad[2] = {0, 2};
    const int32_t pair[2] = {0, 1};
    const int32_t frac[1] = {512};
    const int32_t frac_bad[1] = {1025};
    nnrt_resize_bilinear_s8_params_t rb = {{1, 2, 2, 1, 1, 1, rows_bad, pair}, frac, frac};
    if (nnrt_resize_bilinear_s8(&rb, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    rb.shape.rows = pair;
    rb.row_frac = frac_bad;
    if (nnrt_resize_bilinear_s8(&rb, in, out) != NNRT_ERR_ARG) {
        fails++;
    }
    /* the middle of a 2x2 image [-8 -7; -6 -5]: (-26 / 4) rounded half away = -7 */
    rb.row_frac = frac;
    if (nnrt_resize_bilinear_s8(&rb, in, out) != NNRT_OK || out[0] != -7) {
        fails++;
    }
    const float fin[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float fout[1] = {0.0f};
    const float w_bad[2] = {0.5f, 0.5f};
    nnrt_resize_bilinear_f32_params_t rf = {{1, 2, 2, 1, 1, 0, pair, pair}, w_bad, w_bad};
    if (nnrt_resize_bilinear_f32(&rf, fin, fout) != NNRT_ERR_ARG) {  /* 0 channels */
        fails++;
    }
    rf.shape.channels = 1;
    if (nnrt_resize_bilinear_f32(&rf, fin, fout) != NNRT_OK || fout[0] != 2.5f) {
        fails++;
    }
    printf(fails ? "FAIL %d\n" : "OK\n", fails);
    return fails != 0;
}
