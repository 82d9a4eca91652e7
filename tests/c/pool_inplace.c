#include <stdio.h>
#include <string.h>
#include "nnrt/kernels/pool.h"

static int check(nnrt_pool_geom_t g, unsigned seed)
{
    static int8_t in[4096], ref[4096], buf[4096];
    static float fin[4096], fref[4096], fbuf[4096];
    const int n_in = g.batches * g.input_h * g.input_w * g.channels;
    const int n_out = g.batches * g.output_h * g.output_w * g.channels;
    for (int i = 0; i < n_in; ++i) {
        seed = seed * 1103515245u + 12345u;
        in[i] = (int8_t)(seed >> 16);
        fin[i] = (float)(int8_t)(seed >> 16) * 0.25f;
    }
    nnrt_pool_s8_params_t p = {g, -100, 90};
    nnrt_pool_f32_params_t pf = {g, -20.0f, 25.0f};
    for (int kind = 0; kind < 2; ++kind) {
        memcpy(buf, in, sizeof in);
        memcpy(fbuf, fin, sizeof fin);
        nnrt_status_t s1, s2, s3, s4;
        if (kind == 0) {
            s1 = nnrt_maxpool2d_s8(&p, in, ref);
            s2 = nnrt_maxpool2d_s8(&p, buf, buf);
            s3 = nnrt_maxpool2d_f32(&pf, fin, fref);
            s4 = nnrt_maxpool2d_f32(&pf, fbuf, fbuf);
        } else {
            s1 = nnrt_avgpool2d_s8(&p, in, ref);
            s2 = nnrt_avgpool2d_s8(&p, buf, buf);
            s3 = nnrt_avgpool2d_f32(&pf, fin, fref);
            s4 = nnrt_avgpool2d_f32(&pf, fbuf, fbuf);
        }
        if (s1 || s2 || s3 || s4 || memcmp(ref, buf, (size_t)n_out)
            || memcmp(fref, fbuf, sizeof(float) * (size_t)n_out)) {
            printf("in-place mismatch: kind %d geometry %dx%d f%dx%d s%dx%d c%d\n", kind,
                   g.input_h, g.input_w, g.filter_h, g.filter_w, g.stride_h, g.stride_w,
                   g.channels);
            return 1;
        }
    }
    return 0;
}

int main(void)
{
    int fails = 0;
    /* batches, in_h, in_w, c, out_h, out_w, f_h, f_w, s_h, s_w, pad_top, pad_left */
    const nnrt_pool_geom_t geoms[] = {
        {1, 8, 8, 5, 4, 4, 2, 2, 2, 2, 0, 0},
        {2, 7, 9, 3, 3, 4, 3, 3, 2, 2, 0, 0},
        {1, 6, 6, 70, 4, 4, 3, 3, 1, 1, 0, 0},   /* overlapping windows, stride 1 */
        {1, 6, 6, 7, 3, 3, 3, 3, 2, 2, 0, 0},    /* SAME with bottom/right pad only */
        {2, 5, 5, 40, 1, 1, 5, 5, 1, 1, 0, 0},   /* global */
        {1, 9, 4, 6, 9, 2, 1, 2, 1, 2, 0, 0},
    };
    for (unsigned i = 0; i < sizeof geoms / sizeof geoms[0]; ++i) {
        fails += check(geoms[i], 17u + i);
    }
    /* argument checks */
    nnrt_pool_s8_params_t bad = {{1, 4, 4, 1, 2, 2, 2, 2, 2, 2, 0, 0}, 10, -10};
    int8_t x[16] = {0};
    if (nnrt_maxpool2d_s8(&bad, x, x) != NNRT_ERR_ARG) {
        printf("act_min > act_max accepted\n");
        fails++;
    }
    if (nnrt_avgpool2d_s8(NULL, x, x) != NNRT_ERR_ARG) {
        printf("NULL params accepted\n");
        fails++;
    }
    nnrt_pool_s8_params_t empty = {{1, 4, 4, 1, 2, 2, 1, 1, 1, 1, 3, 0}, -128, 127};
    if (nnrt_avgpool2d_s8(&empty, x, x) != NNRT_ERR_ARG) {
        printf("window inside the padding accepted\n");
        fails++;
    }
    printf(fails ? "FAIL\n" : "OK\n");
    return fails != 0;
}
