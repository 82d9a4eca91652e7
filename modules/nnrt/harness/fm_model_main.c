/*
 * Entry point for a model whose feature maps go out of core (nnopt.testing.fm_model:
 * tests/test_swap_fm_model.py, benchmarks/bench_out_of_core.py):
 * takes `-f FILE` (the tile file: a host file, the semihosting file under QEMU) and the
 * attacks off the command line, attaches the model's tile store over a file device,
 * then runs the generic harness (modules/nnrt/harness/runner_main.c built as a library
 * with -Dmain=nnrt_runner_main) with the remaining arguments.
 *
 *   -x N   flip one bit of the N-th tile written (0-based, over all inferences)
 *   -R N M write the sealed bytes of write M again in place of write N (M < N: a stale
 *          tile from an earlier inference replayed)
 *
 * Build with -DNNRT_FM_ATTACH=<name>_fm_attach. Prints "fm: writes=<n> reads=<n>
 * written_bytes=<n> read_bytes=<n>" (device calls and sealed bytes, tags included). Exit codes: the harness's; 10 + (-status) when attaching fails.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnrt/fmstore.h"
#include "nnrt/port.h"

/* Append the decimal digits of v at *p (advanced past them). */
static void put_u32(char **p, uint32_t v)
{
    char digits[11];
    int n = 0;

    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (n > 0) {
        *(*p)++ = digits[--n];
    }
}

static void put_text(char **p, const char *s)
{
    while (*s != '\0') {
        *(*p)++ = *s++;
    }
}

#ifndef NNRT_FM_ATTACH
#error "define NNRT_FM_ATTACH to the model's <name>_fm_attach"
#endif

nnrt_status_t NNRT_FM_ATTACH(nnrt_tiledev_t *dev, const uint8_t *key, size_t key_len,
                             uint32_t algorithm, const uint8_t salt[4]);
int nnrt_runner_main(int argc, char **argv);

#define MAX_ARGS 64
#define BOUNCE 4096u

static nnrt_tiledev_t g_file_dev;
static nnrt_tiledev_file_t g_file;
static nnrt_tiledev_t g_dev; /* the attacker between the store and the file */
static long g_flip = -1, g_replay = -1, g_replay_src = -1;
static uint32_t g_writes, g_reads;
static uint32_t g_written_bytes, g_read_bytes; /* sealed bytes moved (tags included) */
static uint32_t g_saved_off, g_saved_len; /* where write M went in the file */
static uint8_t g_bounce[BOUNCE];
static const uint8_t KEY[32] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6,
                                7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22};

static nnrt_status_t evil_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src, size_t len)
{
    long n = (long)g_writes++;
    (void)dev;
    g_written_bytes += (uint32_t)len;
    if (n == g_replay_src) {
        g_saved_off = offset;
        g_saved_len = (uint32_t)len;
    }
    if (n == g_flip) {
        /* the sealed tile is not used again after put(): flip it on its way out */
        ((uint8_t *)(uintptr_t)src)[len / 2] ^= 0x04u;
    }
    if (n == g_replay && g_saved_len == len && offset == g_file.length) {
        /* append write M's sealed bytes (from the file, through a small buffer) */
        for (uint32_t done = 0; done < len; done += BOUNCE) {
            uint32_t k = (uint32_t)len - done < BOUNCE ? (uint32_t)len - done : BOUNCE;
            if (nnrt_port_read_file_at(g_file.path, g_saved_off + done, g_bounce, k,
                                       g_file.length + done, NULL) != NNRT_OK
                || nnrt_port_write_file(g_file.path, g_bounce, k, 1) != NNRT_OK) {
                return NNRT_ERR_IO;
            }
        }
        g_file.length += (uint32_t)len;
        return NNRT_OK;
    }
    return g_file_dev.write(&g_file_dev, offset, src, len);
}

static nnrt_status_t evil_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
    (void)dev;
    g_reads++;
    g_read_bytes += (uint32_t)len;
    return g_file_dev.read(&g_file_dev, offset, dst, len);
}

int main(int argc, char **argv)
{
    char *rest[MAX_ARGS];
    const char *path = NULL;
    nnrt_status_t st;
    char line[160];
    char *p = line;
    int n = 0;
    int rc;

    if (argc > MAX_ARGS) {
        return 2;
    }
    for (int a = 0; a < argc; ++a) {
        if (a > 0 && strcmp(argv[a], "-f") == 0 && a + 1 < argc) {
            path = argv[++a];
        } else if (a > 0 && strcmp(argv[a], "-x") == 0 && a + 1 < argc) {
            g_flip = strtol(argv[++a], NULL, 10);
        } else if (a > 0 && strcmp(argv[a], "-R") == 0 && a + 2 < argc) {
            g_replay = strtol(argv[++a], NULL, 10);
            g_replay_src = strtol(argv[++a], NULL, 10);
        } else {
            rest[n++] = argv[a];
        }
    }
    if (path == NULL || nnrt_tiledev_file_init(&g_file_dev, &g_file, path, 64u << 20) != NNRT_OK) {
        nnrt_port_log_error("fm_model: -f FILE is required");
        return 2;
    }
    g_dev = g_file_dev;
    g_dev.write = evil_write;
    g_dev.read = evil_read;
    st = NNRT_FM_ATTACH(&g_dev, KEY, sizeof(KEY), NNRT_SWAP_ALG_CHACHA20_POLY1305,
                        (const uint8_t *)"boot");
    if (st != NNRT_OK) {
        return 10 + (int)(-(int)st);
    }
    rc = nnrt_runner_main(n, rest);
    put_text(&p, "fm: writes=");
    put_u32(&p, g_writes);
    put_text(&p, " reads=");
    put_u32(&p, g_reads);
    put_text(&p, " written_bytes=");
    put_u32(&p, g_written_bytes);
    put_text(&p, " read_bytes=");
    put_u32(&p, g_read_bytes);
    *p = '\0';
    nnrt_port_log(line);
    return rc;
}
