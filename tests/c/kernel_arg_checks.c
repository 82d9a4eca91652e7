#include <stddef.h>
#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/fc.h"

static int fails;
#define EXPECT(cond) do { if (!(cond)) { fails++; } } while (0)

int main(void)
{
    static const int32_t mult[1] = {1 << 30};
    static const int32_t shift[1] = {0};
    int8_t in[16] = {0}, w[16] = {0}, out[16];
    float fin[16] = {0}, fw[16] = {0}, fout[16];
    nnrt_conv_s8_params_t p = {{1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
                               0, 0, -128, 127, 0, mult, shift, NULL};
    nnrt_conv_f32_params_t pf = {{1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
                                 -1.0f, 1.0f, NULL};
    EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_OK && out[0] == 0);
    EXPECT(nnrt_depthwise_conv2d_s8(&p, in, w, NULL, out) == NNRT_OK);
    EXPECT(nnrt_conv2d_f32(&pf, fin, fw, NULL, fout) == NNRT_OK);
    EXPECT(nnrt_depthwise_conv2d_f32(&pf, fin, fw, NULL, fout) == NNRT_OK);
    EXPECT(nnrt_conv2d_s8(NULL, in, w, NULL, out) == NNRT_ERR_ARG);
    EXPECT(nnrt_conv2d_s8(&p, NULL, w, NULL, out) == NNRT_ERR_ARG);
    EXPECT(nnrt_conv2d_f32(&pf, fin, NULL, NULL, fout) == NNRT_ERR_ARG);
    EXPECT(nnrt_depthwise_conv2d_f32(&pf, fin, fw, NULL, NULL) == NNRT_ERR_ARG);
    p.act_min = 10; p.act_max = 5;
    EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
    p.act_min = -128; p.act_max = 127; p.geom.stride_h = 0;
    EXPECT(nnrt_depthwise_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
    p.geom.stride_h = 1; p.geom.output_c = 2;   /* depthwise: C * M != OC */
    EXPECT(nnrt_depthwise_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
    p.geom.output_c = 1; p.input_offset = 129;
    EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
    p.input_offset = 0;
    {
        /* a pool window that starts beyond the conv output */
        nnrt_conv_pool_t pool = {2, 1, 1, 1, 2, 1, 0, 0, -128, 127, -1.0f, 1.0f};
        p.pool = &pool;
        EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
        pool.output_h = 1;
        EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_OK);
        pool.act_min = 3; pool.act_max = 2;
        EXPECT(nnrt_conv2d_s8(&p, in, w, NULL, out) == NNRT_ERR_ARG);
    }
    {
        nnrt_fc_s8_params_t q = {2, 4, 2, 0, 0, 0, -128, 127, 0, mult, shift};
        nnrt_fc_f32_params_t qf = {2, 4, 2, -1.0f, 1.0f};
        EXPECT(nnrt_fully_connected_s8(&q, in, w, NULL, out) == NNRT_OK);
        EXPECT(nnrt_fully_connected_f32(&qf, fin, fw, NULL, fout) == NNRT_OK);
        EXPECT(nnrt_fully_connected_s8(&q, in, NULL, NULL, out) == NNRT_ERR_ARG);
        EXPECT(nnrt_fully_connected_f32(NULL, fin, fw, NULL, fout) == NNRT_ERR_ARG);
        q.accum_depth = 0;
        EXPECT(nnrt_fully_connected_s8(&q, in, w, NULL, out) == NNRT_ERR_ARG);
        q.accum_depth = 4; q.shift = NULL;
        EXPECT(nnrt_fully_connected_s8(&q, in, w, NULL, out) == NNRT_ERR_ARG);
        qf.act_min = 2.0f;
        EXPECT(nnrt_fully_connected_f32(&qf, fin, fw, NULL, fout) == NNRT_ERR_ARG);
    }
    return fails;
}
