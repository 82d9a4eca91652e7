/*
 * The row-band reductions of pool.h against the whole kernels: nnrt_avgpool2d_rows_*
 * against nnrt_avgpool2d_* (a global pool) and nnrt_mean_rows_* against nnrt_mean_*
 * (axes 1 and 2), for every band height, over two inferences with other inputs (the
 * band starting at row 0 resets the partial sums): identical bytes (float32 too); and
 * the argument checks.
 */
#include <stdio.h>
#include <string.h>
#include "nnrt/kernels/pool.h"

#define H 7
#define W 5
#define C 37

static int8_t in8[H * W * C];
static float inf[H * W * C];

static void fill(unsigned seed)
{
    for (int i = 0; i < H * W * C; ++i) {
        seed = seed * 1103515245u + 12345u;
        in8[i] = (int8_t)(seed >> 16);
        inf[i] = (float)(int32_t)(seed >> 8 & 0xffff) * 0.001f - 30.0f;
    }
}

int main(void)
{
    int fails = 0;
    const nnrt_pool_geom_t g = {1, H, W, C, 1, 1, H, W, H, W, 0, 0};
    const nnrt_pool_s8_params_t p8 = {g, -100, 90};
    const nnrt_pool_f32_params_t pf = {g, -20.0f, 25.0f};
    const nnrt_pool_f32_params_t pm = {g, -3.4e38f, 3.4e38f};
    nnrt_mean_s8_params_t m8;
    memset(&m8, 0, sizeof m8);
    m8.geom.outer_rank = 1;
    m8.geom.outer_dims[0] = C;
    m8.geom.outer_strides[0] = 1;
    m8.geom.reduce_rank = 1;
    m8.geom.reduce_dims[0] = H * W;
    m8.geom.reduce_strides[0] = C;
    m8.input_zero_point = -7;
    m8.output_zero_point = 3;
    m8.multiplier = 1518500250; /* ~0.707 / 35 with the shift below */
    m8.shift = -5;
    m8.count = H * W;
    const nnrt_mean_rows_s8_params_t r8 = {g, -128, 127, -7, 3, 1518500250, -5};
    for (int h = 1; h <= H; ++h) {
        int32_t acc8[C];
        float accf[C];
        memset(acc8, 0x55, sizeof acc8); /* stale sums: the first band resets them */
        memset(accf, 0x55, sizeof accf);
        for (int pass = 0; pass < 2; ++pass) {
            fill(11u + (unsigned)(h * 2 + pass));
            int8_t w8[C], b8[C], wm[C], bm[C];
            float wf[C], bf[C], wmf[C], bmf[C];
            int s = nnrt_avgpool2d_s8(&p8, in8, w8) | nnrt_avgpool2d_f32(&pf, inf, wf)
                    | nnrt_mean_s8(&m8, in8, wm) | nnrt_mean_f32(&m8.geom, inf, wmf);
            for (int kind = 0; kind < 4; ++kind) {
                for (int r = 0; r < H; r += h) {
                    const int n = H - r < h ? H - r : h;
                    const size_t at = (size_t)r * W * C;
                    if (kind == 0) {
                        s |= nnrt_avgpool2d_rows_s8(&p8, in8 + at, r, n, acc8, b8);
                    } else if (kind == 1) {
                        s |= nnrt_avgpool2d_rows_f32(&pf, inf + at, r, n, accf, bf);
                    } else if (kind == 2) {
                        s |= nnrt_mean_rows_s8(&r8, in8 + at, r, n, acc8, bm);
                    } else {
                        s |= nnrt_mean_rows_f32(&pm, inf + at, r, n, accf, bmf);
                    }
                }
            }
            if (s || memcmp(w8, b8, C) || memcmp(wf, bf, sizeof wf) || memcmp(wm, bm, C)
                || memcmp(wmf, bmf, sizeof wmf)) {
                printf("bands of %d rows, pass %d: differ from the whole kernels\n", h, pass);
                fails++;
            }
        }
    }
    int32_t acc[C];
    int8_t out[C];
    nnrt_pool_s8_params_t strided = {{1, H, W, C, 2, 1, 4, W, 3, W, 0, 0}, -128, 127};
    if (nnrt_avgpool2d_rows_s8(&p8, in8, 5, 3, acc, out) != NNRT_ERR_ARG
        || nnrt_avgpool2d_rows_s8(&p8, in8, 0, 0, acc, out) != NNRT_ERR_ARG
        || nnrt_avgpool2d_rows_s8(&p8, in8, 0, 1, NULL, out) != NNRT_ERR_ARG
        || nnrt_avgpool2d_rows_s8(&strided, in8, 0, 1, acc, out) != NNRT_ERR_ARG
        || nnrt_mean_rows_s8(NULL, in8, 0, 1, acc, out) != NNRT_ERR_ARG) {
        printf("a bad argument accepted\n");
        fails++;
    }
    printf(fails ? "FAIL\n" : "OK\n");
    return fails != 0;
}
