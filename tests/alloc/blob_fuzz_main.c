/*
 * Mutation fuzzer for the model loader (nnrt/loader.h), built with ASan + UBSan.
 *
 *   blob_fuzz BLOB BLOB_BYTES SEED ITERATIONS
 *
 * Each iteration copies the blob, applies 1..4 random mutations (byte flips, fields
 * set to boundary values, truncation, data from elsewhere in the blob), and in most
 * iterations recomputes the CRC so the mutation reaches the structural checks. Then:
 * nnrt_loader_check(), nnrt_loader_open() with exactly the arena and work memory the
 * blob asks for, and, when it opened, one inference on zero inputs. The blob copy,
 * the arena and the work memory are each followed by poisoned memory (ASan), so a read
 * or write one byte past any of them aborts the run.
 *
 * Prints "fuzz: iterations=N ok=K format=F unsupported=U other=O ran=R".
 * Exit 0 when every iteration returned a status (no crash, no sanitizer report).
 */
#include <stdint.h>
#include <string.h>

#include "nnrt/loader.h"
#include "nnrt/port.h"

#include "../c/test_text.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) __asan_poison_memory_region((p), (n))
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define BLOB_MAX (512u * 1024u)
#define ARENA_MAX (256u * 1024u)
#define WORK_MAX (16u * 1024u)
#define GUARD 64u

static uint8_t orig[BLOB_MAX];
static uint8_t blob[BLOB_MAX + GUARD] __attribute__((aligned(16)));
static uint8_t arena[ARENA_MAX + GUARD] __attribute__((aligned(16)));
static uint8_t work[WORK_MAX + GUARD] __attribute__((aligned(16)));
static nnrt_loader_t ld;

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static uint32_t parse_u32(const char *s)
{
    uint32_t v = 0;

    while (*s >= '0' && *s <= '9') {
        v = v * 10u + (uint32_t)(*s++ - '0');
    }
    return v;
}

static uint32_t crc32(const uint8_t *p, uint32_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    uint32_t i;
    int k;

    for (i = 0; i < n; i++) {
        crc ^= (i >= 12u && i < 16u) ? 0u : p[i];
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static const uint32_t boundary[] = {
    0u, 1u, 2u, 3u, 4u, 15u, 16u, 17u, 255u, 0x7Fu, 0x80u, 0xFFFEu, 0xFFFFu, 0x10000u,
    0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFEu, 31u, 32u, 64u, 1024u,
};

/* One mutation of blob[0, *n); biased to the tables and parameter records. */
static void mutate(uint32_t *n)
{
    uint32_t data_off = rd32(blob + 60);
    uint32_t hot = (data_off > 64u && data_off < *n) ? data_off : *n;
    uint32_t r = rnd() % 100u;
    uint32_t pos;

    if (*n == 0u) {
        return;
    }
    /* Most mutations land before the data section or in the first parameter records. */
    if (rnd() % 4u == 0u && *n > hot) {
        pos = hot + rnd() % (*n - hot);
    } else {
        pos = rnd() % (hot + 256u < *n ? hot + 256u : *n);
    }
    if (r < 35) {
        blob[pos] ^= (uint8_t)(1u << (rnd() % 8u));
    } else if (r < 70) {
        uint32_t v = boundary[rnd() % (sizeof(boundary) / sizeof(boundary[0]))];
        uint32_t width = 1u << (rnd() % 3u); /* 1, 2 or 4 bytes */
        uint32_t k;

        pos &= ~(width - 1u);
        for (k = 0; k < width && pos + k < *n; k++) {
            blob[pos + k] = (uint8_t)(v >> (8u * k));
        }
    } else if (r < 80) {
        blob[pos] = (uint8_t)rnd();
    } else if (r < 90 && *n > 8u) {
        uint32_t src = rnd() % (*n - 4u);
        uint32_t k;

        for (k = 0; k < 4u && pos + k < *n; k++) {
            blob[pos + k] = blob[src + k];
        }
    } else if (*n > 1u) {
        *n = rnd() % *n; /* truncate; sometimes fix the size field */
        if (rnd() % 2u && *n >= 16u) {
            wr32(blob + 8, *n);
        }
    }
}

int main(int argc, char **argv)
{
    uint32_t n0;
    uint32_t iters;
    uint32_t it;
    uint32_t ok = 0, format = 0, unsupported = 0, other = 0, ran = 0;
    char line[160];
    char *end = line;
    uint32_t counts[6];
    const char *names[6] = {"iterations=", " ok=", " format=", " unsupported=", " other=",
                            " ran="};
    int k;

    if (argc != 5) {
        nnrt_port_log_error("usage: blob_fuzz BLOB BYTES SEED ITERATIONS");
        return 2;
    }
    n0 = parse_u32(argv[2]);
    rng_state = 0x9E3779B97F4A7C15ull ^ parse_u32(argv[3]);
    iters = parse_u32(argv[4]);
    if (n0 > BLOB_MAX || nnrt_port_read_file(argv[1], orig, n0, NULL) != NNRT_OK) {
        nnrt_port_log_error("blob_fuzz: cannot read the blob");
        return 3;
    }
    for (it = 0; it < iters; it++) {
        uint32_t n = n0;
        uint32_t m = 1u + rnd() % 4u;
        nnrt_loader_needs_t needs;
        nnrt_status_t s;

        UNPOISON(blob, sizeof(blob));
        memcpy(blob, orig, n0);
        while (m-- > 0u) {
            mutate(&n);
        }
        if (rnd() % 10u != 0u && n >= 16u) {
            uint32_t total = rd32(blob + 8);

            wr32(blob + 12, crc32(blob, total <= n ? total : n));
        }
        POISON(blob + n, sizeof(blob) - n);
        s = nnrt_loader_check(blob, n, &needs);
        if (s == NNRT_OK) {
            if (needs.arena_bytes > ARENA_MAX || needs.work_bytes > WORK_MAX) {
                s = NNRT_ERR_NOMEM;
            } else {
                uint32_t ab = (needs.arena_bytes + 15u) & ~15u;

                UNPOISON(arena, sizeof(arena));
                UNPOISON(work, sizeof(work));
                POISON(arena + ab, sizeof(arena) - ab);
                POISON(work + needs.work_bytes, sizeof(work) - needs.work_bytes);
                s = nnrt_loader_open(&ld, blob, n, arena, ab, work, needs.work_bytes);
            }
        }
        if (s == NNRT_OK) {
            uint32_t i;

            for (i = 0; i < needs.n_inputs; i++) {
                size_t bytes = 0;
                void *p = nnrt_loader_input(&ld, i, &bytes);

                if (p != NULL) {
                    memset(p, (int)(i + 1u), bytes);
                }
            }
            s = nnrt_loader_invoke(&ld);
            ran++;
            for (i = 0; s == NNRT_OK && i < needs.n_outputs; i++) {
                size_t bytes = 0;
                const uint8_t *p = (const uint8_t *)nnrt_loader_output(&ld, i, &bytes);
                volatile uint8_t sink = 0;

                if (p != NULL && bytes > 0u) {
                    sink ^= p[0];
                    sink ^= p[bytes - 1u];
                }
                (void)sink;
            }
        }
        if (s == NNRT_OK) {
            ok++;
        } else if (s == NNRT_ERR_FORMAT) {
            format++;
        } else if (s == NNRT_ERR_UNSUPPORTED) {
            unsupported++;
        } else {
            other++;
        }
    }
    counts[0] = iters;
    counts[1] = ok;
    counts[2] = format;
    counts[3] = unsupported;
    counts[4] = other;
    counts[5] = ran;
    put_str(&end, "fuzz: ");
    for (k = 0; k < 6; k++) {
        put_str(&end, names[k]);
        put_u64(&end, counts[k]);
    }
    *end = '\0';
    nnrt_port_log(line);
    return 0;
}
