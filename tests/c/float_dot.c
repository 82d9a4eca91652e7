/*
 * nnrt_dot4_f32 (kernels/internal/dot_f32.h) against the reference loop written out
 * here (each row's products added in input order from its starting accumulator): random
 * lengths 0..NMAX, rows at any offset (not only one stride apart, as the convolution
 * passes them), values over many binades, signed zeros, denormals and infinities. Every
 * result is compared bit for bit; the hash of all results must be the same on every
 * build (FPU assembly, portable C, soft float, host).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/port.h"

#include "internal/dot_f32.h"

#include "test_rng.h"
#include "test_text.h"

#define NMAX 300
static float x_buf[NMAX + 4];
static float w_buf[4][NMAX + 4];

static uint32_t hash = 2166136261u;
static int fails;

/* NaNs hash alike: the default NaN's sign differs between Arm and x86. */
static void hash_float(float v)
{
    uint32_t u = 0x7FC00000u;
    if (v == v) {
        memcpy(&u, &v, sizeof(u));
    }
    for (int k = 0; k < 4; ++k) {
        hash = (hash ^ ((u >> (8 * k)) & 0xFFu)) * 16777619u;
    }
}

static float rand_float(void)
{
    const uint32_t kind = rnd() % 64u;
    uint32_t u;
    if (kind == 0u) {
        u = rnd() & 0x807FFFFFu; /* denormal (or signed zero) */
    } else if (kind == 1u) {
        u = (rnd() & 0x80000000u) | 0x7F800000u; /* infinity */
    } else {
        /* exponent within 2^-20 .. 2^20: products and sums that round */
        u = (rnd() & 0x807FFFFFu) | ((uint32_t)(127 - 20 + (int32_t)(rnd() % 41u)) << 23);
    }
    float v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

/* The header's inline function as one symbol (the test reads its machine code). */
__attribute__((noinline)) void dot4_under_test(const float *x, const float *const w[4],
                                               int32_t n, float acc[4], int unroll);
__attribute__((noinline)) void dot4_under_test(const float *x, const float *const w[4],
                                               int32_t n, float acc[4], int unroll)
{
    if (unroll) {
        nnrt_dot4_f32(x, w, n, acc, 1);
    } else {
        nnrt_dot4_f32(x, w, n, acc, 0);
    }
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static void say(const char *what, int32_t a, int32_t b)
{
    char line[96];
    char *p = line;
    put_str(&p, what);
    int32_t v[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
        *p++ = ' ';
        if (v[k] < 0) {
            *p++ = '-';
            v[k] = -v[k];
        }
        put_u64(&p, (uint64_t)v[k]);
    }
    *p = '\0';
    nnrt_port_log(line);
}

static void run_case(int32_t i)
{
    const int32_t n = i < 16 ? i : (int32_t)(rnd() % (NMAX + 1u));
    const int32_t x0 = (int32_t)(rnd() % 4u);
    for (int32_t d = 0; d < n; ++d) {
        x_buf[x0 + d] = rand_float();
    }
    const float *w[4];
    for (int r = 0; r < 4; ++r) {
        const int32_t w0 = (int32_t)(rnd() % 4u);
        for (int32_t d = 0; d < n; ++d) {
            w_buf[r][w0 + d] = rand_float();
        }
        w[r] = &w_buf[r][w0];
    }
    if (rnd() % 8u == 0u) {
        w[3] = w[0]; /* a last block of fewer rows repeats its first */
    }
    float acc[4];
    float want[4];
    for (int r = 0; r < 4; ++r) {
        acc[r] = rnd() % 4u == 0u ? 0.0f : rand_float();
        float a = acc[r];
        for (int32_t d = 0; d < n; ++d) {
            a += x_buf[x0 + d] * w[r][d];
        }
        want[r] = a;
    }
    dot4_under_test(&x_buf[x0], w, n, acc, (int)(rnd() & 1u));
    for (int r = 0; r < 4; ++r) {
        hash_float(acc[r]);
        if (!same_bits(acc[r], want[r]) && !(acc[r] != acc[r] && want[r] != want[r])) {
            if (fails < 20) {
                say("mismatch case/row", i, r);
            }
            ++fails;
        }
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (int32_t i = 0; i < NCASES; ++i) {
        run_case(i);
    }
    say("fails", fails, 0);
    say("hash", (int32_t)(hash >> 16), (int32_t)(hash & 0xFFFFu));
    return fails == 0 ? 0 : 1;
}
