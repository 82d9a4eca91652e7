/* The exported argument checks of the softmax, activation and data-movement kernels
 * (nnrt_*_check(), the model loader calls them): each accepts good parameters and
 * rejects, with NNRT_ERR_ARG, a zero or negative extent and an out-of-range value. */
#include <stddef.h>
#include "nnrt/kernels/activation.h"
#include "nnrt/kernels/shape.h"
#include "nnrt/kernels/softmax.h"

static int fails;
#define EXPECT(cond) do { if (!(cond)) { fails++; } } while (0)
#define OK(call) EXPECT((call) == NNRT_OK)
#define BAD(call) EXPECT((call) == NNRT_ERR_ARG)

/* buffers for the kernels, run where a check is expected to agree with them */
static int8_t in8[16], out8[16];
static float inf[16], outf[16];

/* The check, after the kernel it belongs to gave the same status (Prepare/Eval). */
static nnrt_status_t softmax_s8(const nnrt_softmax_s8_params_t *p, int32_t rows, int32_t depth)
{
    const nnrt_status_t s = nnrt_softmax_s8_check(p, rows, depth);

    EXPECT(nnrt_softmax_s8(p, in8, out8, rows, depth) == s);
    return s;
}

static nnrt_status_t clamp_s8(int32_t lo, int32_t hi, int32_t n)
{
    const nnrt_status_t s = nnrt_clamp_s8_check(lo, hi, n);

    EXPECT(nnrt_clamp_s8(lo, hi, in8, out8, n) == s);
    return s;
}

static void softmax(void)
{
    nnrt_softmax_s8_params_t p = {1 << 30, 23, -248};

    OK(softmax_s8(&p, 1, 10));
    OK(softmax_s8(&p, 0, 1));
    BAD(softmax_s8(NULL, 1, 10));
    BAD(softmax_s8(&p, -1, 10));
    BAD(softmax_s8(&p, 1, 0));
    p.input_left_shift = 32;
    BAD(softmax_s8(&p, 1, 10));
    p.input_left_shift = -1;
    BAD(softmax_s8(&p, 1, 10));
    p.input_left_shift = 31;
    OK(softmax_s8(&p, 1, 10));
    p.diff_min = 1;
    BAD(softmax_s8(&p, 1, 10));
    OK(nnrt_softmax_f32_check(3, 4));
    EXPECT(nnrt_softmax_f32(1.0f, inf, outf, 3, 4) == NNRT_OK);
    EXPECT(nnrt_softmax_f32(1.0f, inf, outf, 3, 0) == nnrt_softmax_f32_check(3, 0));
    BAD(nnrt_softmax_f32_check(-1, 4));
    BAD(nnrt_softmax_f32_check(3, 0));
}

static void activation(void)
{
    OK(nnrt_table_lookup_s8_check(0));
    OK(nnrt_table_lookup_s8_check(100));
    BAD(nnrt_table_lookup_s8_check(-1));
    OK(clamp_s8(-128, 127, 8));
    OK(clamp_s8(5, 5, 8));
    BAD(clamp_s8(-128, 127, -1));
    BAD(clamp_s8(-129, 127, 8));
    BAD(clamp_s8(-128, 128, 8));
    BAD(clamp_s8(6, 5, 8));
    OK(nnrt_unary_f32_check(0));
    BAD(nnrt_unary_f32_check(-5));
}

static void shape(void)
{
    int32_t blocks[2] = {4, 0};
    nnrt_concat_params_t c = {2, 2, blocks};
    nnrt_pad_params_t pad = {2, 1, {3, 4}, {1, 0}, {0, 2}};
    nnrt_strided_copy_params_t sc = {2, 4, 0, {2, 3}, {12, 4}};

    OK(nnrt_concat_check(&c));
    BAD(nnrt_concat_check(NULL));
    c.outer = 0;
    BAD(nnrt_concat_check(&c));
    c.outer = 2; c.num_inputs = 0;
    BAD(nnrt_concat_check(&c));
    c.num_inputs = 2; blocks[1] = -1;
    BAD(nnrt_concat_check(&c));
    blocks[1] = 0; c.block_bytes = NULL;
    BAD(nnrt_concat_check(&c));

    OK(nnrt_pad_check(&pad));
    BAD(nnrt_pad_check(NULL));
    pad.input_dims[1] = 0;
    BAD(nnrt_pad_check(&pad));
    pad.input_dims[1] = 4; pad.after[0] = -1;
    BAD(nnrt_pad_check(&pad));
    pad.after[0] = 0; pad.elem_size = 3;
    BAD(nnrt_pad_check(&pad));
    pad.elem_size = 2; pad.rank = NNRT_PAD_MAX_DIMS + 1;
    BAD(nnrt_pad_check(&pad));
    pad.rank = 0;
    BAD(nnrt_pad_check(&pad));
    pad.rank = 2;
    OK(nnrt_pad_check(&pad));

    OK(nnrt_strided_copy_check(&sc));
    BAD(nnrt_strided_copy_check(NULL));
    sc.dims[0] = -2;
    BAD(nnrt_strided_copy_check(&sc));
    sc.dims[0] = 2; sc.offset = -1;
    BAD(nnrt_strided_copy_check(&sc));
    sc.offset = 8; sc.strides[1] = -4; /* negative strides are the kernel's to allow */
    OK(nnrt_strided_copy_check(&sc));
    sc.elem_size = 8;
    BAD(nnrt_strided_copy_check(&sc));
    sc.elem_size = 1; sc.rank = NNRT_MAX_DIMS + 1;
    BAD(nnrt_strided_copy_check(&sc));
}

int main(void)
{
    softmax();
    activation();
    shape();
    return fails;
}
