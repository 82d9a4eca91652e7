/* The start of the row-pair fully connected property program (tests/ops/test_fc_pairs.py
 * writes the rest): each case's weights twice, row-major for the generic kernel and in
 * the row-pair layout for the specialised function code generation emits, and a main()
 * calling check_fc() on each. The generic kernel (bit-exact with the tflite-micro
 * interpreter: tests/ops/test_fc.py) is the reference. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/fc.h"
#include "nnrt/kernels/spec.h"
#include "nnrt/port.h"

#define MAXB 4096
static int8_t in_buf[MAXB];
static int8_t out_gen[MAXB];
static int8_t out_spec[MAXB];

#define TEST_RNG_SEED 2463534242u
#include "test_rng.h"

static uint32_t hash = 2166136261u;
static int fails;
static int cases;
static char line[64];
/* v in decimal at line[n]; the position after it */
static size_t put_dec(size_t n, uint32_t v)
{
    if (v >= 10u) {
        n = put_dec(n, v / 10u);
    }
    line[n] = (char)('0' + (int)(v % 10u));
    return n + 1;
}
/* "<what> <v>" on a line of its own */
static void say(const char *what, uint32_t v)
{
    size_t n = strlen(what);
    memcpy(line, what, n);
    line[n++] = ' ';
    line[put_dec(n, v)] = '\0';
    nnrt_port_log(line);
}

/* One case: the generic kernel on the row-major weights w and the specialised
 * function on its row-pair copy, on the same input: random bytes (fill > 127) or every
 * byte `fill` (the extreme sums). */
static void check_fc(const nnrt_fc_s8_params_t *p, const int8_t *w, const int32_t *b,
                     size_t in_n, size_t out_n, int fill,
                     nnrt_status_t (*spec)(const int8_t *, int8_t *))
{
    for (size_t i = 0; i < in_n; ++i) {
        in_buf[i] = fill > 127 ? (int8_t)(rnd() >> 24) : (int8_t)fill;
    }
    memset(out_gen, 0x55, out_n);
    memset(out_spec, 0x2a, out_n);
    nnrt_status_t s1 = nnrt_fully_connected_s8(p, in_buf, w, b, out_gen);
    nnrt_status_t s2 = spec(in_buf, out_spec);
    if (s1 != NNRT_OK || s2 != NNRT_OK || memcmp(out_gen, out_spec, out_n) != 0) {
        ++fails;
        say("fail", (uint32_t)cases);
    }
    for (size_t i = 0; i < out_n; ++i) {
        hash = (hash ^ (uint8_t)out_spec[i]) * 16777619u;
    }
    ++cases;
}
