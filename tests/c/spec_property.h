/* The harness of the specialised-kernel property program (tests/ops/test_conv_specialize.py):
 * the generated program is this file followed by the cases, written by Python as code
 * generation writes them, and a main() calling check()/check_fc() on each. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/conv.h"
#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/spec.h"
#include "nnrt/port.h"

#include "property_report.h"

static uint32_t scratch_buf[MAXB / 4];

static void fill8(int8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = (int8_t)(rnd() >> 24);
    }
}
static void fill32(int32_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = (int32_t)(rnd() % 80001u) - 40000;
    }
}

/* One case: the generic kernel and the specialised one on the same data. */
static void check(const nnrt_conv_s8_params_t *p, const int8_t *w, const int32_t *b,
                  size_t in_n, size_t out_n, int with_scratch,
                  nnrt_status_t (*spec)(const int8_t *, int8_t *, void *))
{
    fill8(in_buf, in_n);
    memset(out_gen, 0x55, out_n);
    memset(out_spec, 0x2a, out_n);
    nnrt_status_t s1 = with_scratch
        ? nnrt_conv2d_im2col_s8(p, in_buf, w, b, out_gen, scratch_buf)
        : nnrt_conv2d_opt_s8(p, in_buf, w, b, out_gen);
    memset(scratch_buf, 0x77, sizeof(scratch_buf));
    nnrt_status_t s2 = spec(in_buf, out_spec, with_scratch ? (void *)scratch_buf : NULL);
    report_case(out_spec, out_n,
                s1 == NNRT_OK && s2 == NNRT_OK && memcmp(out_gen, out_spec, out_n) == 0);
}
