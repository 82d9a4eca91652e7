/* What the property programs of the specialised kernels share (spec_property.h,
 * fc_pairs_property.h): the input and output buffers, the random numbers, and what they
 * report: cases run, cases whose bytes differ, and a hash of every output byte
 * (compared across the builds), one "<what> <value>" line each. */
#ifndef PROPERTY_REPORT_H_
#define PROPERTY_REPORT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/kernels/fc.h"
#include "nnrt/port.h"

#define MAXB 4096
static int8_t in_buf[MAXB];
static int8_t out_gen[MAXB];
static int8_t out_spec[MAXB];

#define TEST_RNG_SEED 2463534242u
#include "test_rng.h"

static uint32_t hash = 2166136261u;
static int fails;
static int spec_cases;
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
/* One case's outputs: into the hash; counted, and as failed unless `same`. */
static void report_case(const int8_t *out, size_t n, int same)
{
    if (!same) {
        ++fails;
        say("fail", (uint32_t)spec_cases);
    }
    for (size_t i = 0; i < n; ++i) {
        hash = (hash ^ (uint8_t)out[i]) * 16777619u;
    }
    ++spec_cases;
}

/* One fully connected case: the generic kernel on the weights w and the specialised
 * function spec (its own copy of them, in whatever layout it reads) on the same input:
 * random bytes (fill > 127) or every byte `fill`. */
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
    report_case(out_spec, out_n,
                s1 == NNRT_OK && s2 == NNRT_OK && memcmp(out_gen, out_spec, out_n) == 0);
}

#endif /* PROPERTY_REPORT_H_ */
