/*
 * Test harness for the feature-map tile store (nnrt/fmstore.h; tests/test_swap_fmstore.py):
 * a 3,000-byte feature map in four tiles, sealed and written to a file device (host file,
 * or the semihosting file under QEMU), read back and authenticated, over three
 * inferences; then the attacks.
 *
 *   fmstore_test FILE MODE      MODE: ok | flip | stale | replay | wrongkey
 *
 * ok:       three inferences, every tile read back equal to what was written;
 * flip:     one bit of tile 2 flipped in the file: get(2) must fail;
 * stale:    tile 2 not rewritten in inference 2 (its inference-1 copy is still there);
 * replay:   inference 2's tile 2 replaced by inference 1's sealed bytes;
 * wrongkey: tiles read back by a store holding another key;
 * nor:      40 inferences on a simulated NOR (64 KB, 4 KB erase blocks, programming
 *           clears bits only: a missing erase corrupts the tile) through the NOR tile
 *           device: every tile reads back, and prints "nor: erases=<n> min=<a> max=<b>"
 *           (erases per block: even wear means max - min <= 1).
 * ahead:    as ok through a device that reads ahead where the store's prefetch hint
 *           says (as Zephyr's CONFIG_NNRT_SWAP_FM_ASYNC does, here at once) and serves a
 *           read of that range from its buffer; prints "ahead: prefetches=<P> hits=<H>
 *           misses=<M>" (the store learns the read order, last tile first, in inference
 *           1: every later read but an inference's first is then served ahead);
 * ahead_flip: as ahead, one bit of tile 1 flipped in the file in inference 3 before
 *           the reads: the tile read ahead must fail authentication all the same.
 * Prints "fm: status=<S> tile=<T> written=<W> read=<R>" (S the first failing status,
 * T its tile or -1) and exits 0 when every tile verified, 3 when a tile read back wrong
 * (never: that would be a wrong result), 10 + (-S) on a store error, 2 on bad usage.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/fmstore.h"
#include "nnrt/port.h"
#include "../c/test_text.h"

#define FM_BYTES 3000u
#define TILES 4u
#define TILE_BYTES (FM_BYTES / TILES)
#define RING (64u * 1024u)

static uint8_t g_fm[FM_BYTES];
static uint8_t g_tile[TILE_BYTES + NNRT_SWAP_TAG_BYTES] __attribute__((aligned(16)));
static uint8_t g_file[RING];
static uint32_t g_off[TILES];
static uint32_t g_len[TILES];
static uint32_t g_off2[TILES];
static uint32_t g_len2[TILES];
static const uint8_t KEY_A[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t KEY_B[32] = {2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

#define NOR_BLOCK 4096u
static uint8_t g_nor[RING];
static uint32_t g_nor_erases[RING / NOR_BLOCK];

static nnrt_status_t nor_erase(void *ctx, uint32_t offset, uint32_t len)
{
    (void)ctx;
    if (offset % NOR_BLOCK != 0u || len != NOR_BLOCK) {
        return NNRT_ERR_ARG;
    }
    memset(g_nor + offset, 0xFF, len);
    g_nor_erases[offset / NOR_BLOCK]++;
    return NNRT_OK;
}

static nnrt_status_t nor_program(void *ctx, uint32_t offset, const void *src, size_t len)
{
    const uint8_t *b = (const uint8_t *)src;
    (void)ctx;
    for (size_t i = 0; i < len; i++) {
        g_nor[offset + i] &= b[i]; /* NOR: programming can only clear bits */
    }
    return NNRT_OK;
}

static nnrt_status_t nor_read(void *ctx, uint32_t offset, void *dst, size_t len)
{
    (void)ctx;
    memcpy(dst, g_nor + offset, len);
    return NNRT_OK;
}

static void fill(uint32_t inference)
{
    for (uint32_t i = 0; i < FM_BYTES; i++) {
        g_fm[i] = (uint8_t)(i * 31u + inference * 7u + (i >> 8));
    }
}

static nnrt_status_t put_all(nnrt_fmstore_t *s, int skip)
{
    for (uint32_t t = 0; t < TILES; t++) {
        if ((int)t == skip) {
            continue;
        }
        memcpy(g_tile, g_fm + t * TILE_BYTES, TILE_BYTES);
        nnrt_status_t st = nnrt_fmstore_put(s, t, g_tile, TILE_BYTES);
        if (st != NNRT_OK) {
            return st;
        }
    }
    return NNRT_OK;
}

/* Read every tile back (last first) and compare; *bad = tile that failed. */
static nnrt_status_t get_all(nnrt_fmstore_t *s, int *bad)
{
    for (int t = (int)TILES - 1; t >= 0; t--) {
        nnrt_status_t st = nnrt_fmstore_get(s, (uint32_t)t, g_tile, TILE_BYTES);
        if (st != NNRT_OK) {
            for (uint32_t i = 0; i < TILE_BYTES + NNRT_SWAP_TAG_BYTES; i++) {
                if (g_tile[i] != 0u) {
                    nnrt_port_log_error("fm: unauthenticated bytes left in the buffer");
                    nnrt_port_exit(3);
                }
            }
            *bad = t;
            return st;
        }
        if (memcmp(g_tile, g_fm + (uint32_t)t * TILE_BYTES, TILE_BYTES) != 0) {
            nnrt_port_log_error("fm: a tile read back differs (wrong result)");
            nnrt_port_exit(3);
        }
    }
    return NNRT_OK;
}

/* ---- mode ahead: a read-ahead device around the file device ------------------------ */

static nnrt_tiledev_t g_inner;
static uint8_t g_ra[TILE_BYTES + NNRT_SWAP_TAG_BYTES];
static uint32_t g_ra_off, g_ra_len;
static int g_ra_valid;
static uint32_t g_prefetches, g_hits, g_misses;

static nnrt_status_t ra_write(nnrt_tiledev_t *d, uint32_t off, const void *src, size_t len)
{
    (void)d;
    if (g_ra_valid && off < g_ra_off + g_ra_len && g_ra_off < off + len) {
        g_ra_valid = 0; /* bytes read ahead are about to change */
    }
    return g_inner.write(&g_inner, off, src, len);
}

static nnrt_status_t ra_read(nnrt_tiledev_t *d, uint32_t off, void *dst, size_t len)
{
    (void)d;
    if (g_ra_valid && off == g_ra_off && len == g_ra_len) {
        memcpy(dst, g_ra, len);
        g_ra_valid = 0;
        g_hits++;
        return NNRT_OK;
    }
    g_misses++;
    return g_inner.read(&g_inner, off, dst, len);
}

static void ra_prefetch(nnrt_tiledev_t *d, uint32_t off, size_t len)
{
    (void)d;
    if (len > sizeof(g_ra)) {
        return;
    }
    g_prefetches++;
    g_ra_valid = g_inner.read(&g_inner, off, g_ra, len) == NNRT_OK;
    g_ra_off = off;
    g_ra_len = (uint32_t)len;
}

static void print_ahead(void)
{
    char line[96];
    char *q = line;

    put_str(&q, "ahead: prefetches=");
    put_u64(&q, g_prefetches);
    put_str(&q, " hits=");
    put_u64(&q, g_hits);
    put_str(&q, " misses=");
    put_u64(&q, g_misses);
    *q = '\0';
    nnrt_port_log(line);
}

/* Patch the file: read it whole, apply, write it back. */
static int patch(nnrt_tiledev_file_t *f, uint32_t at, const uint8_t *bytes, uint32_t n,
                 uint8_t xor_mask)
{
    if (f->length > RING
        || nnrt_port_read_file(f->path, g_file, f->length, NULL) != NNRT_OK) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        g_file[at + i] = bytes != NULL ? bytes[i] : (uint8_t)(g_file[at + i] ^ xor_mask);
    }
    return nnrt_port_write_file(f->path, g_file, f->length, 0) == NNRT_OK;
}

static int finish(nnrt_status_t st, int tile, const nnrt_fmstore_t *s)
{
    char line[128];
    char *p = line;

    put_str(&p, "fm: status=");
    put_i64(&p, st);
    put_str(&p, " tile=");
    put_i64(&p, tile);
    put_str(&p, " written=");
    put_u64(&p, s->bytes_written);
    put_str(&p, " read=");
    put_u64(&p, s->bytes_read);
    *p = '\0';
    nnrt_port_log(line);
    return st == NNRT_OK ? 0 : 10 - (int)st;
}

int main(int argc, char **argv)
{
    static nnrt_tiledev_t dev;
    static nnrt_tiledev_file_t file;
    static nnrt_fmstore_t s, s2;
    static uint8_t old[TILE_BYTES + NNRT_SWAP_TAG_BYTES];
    nnrt_fmstore_config_t cfg;
    nnrt_status_t st;
    int bad = -1;

    if (argc != 3) {
        nnrt_port_log_error("usage: fmstore_test FILE ok|flip|stale|replay|wrongkey");
        return 2;
    }
    const char *mode = argv[2];
    static nnrt_tiledev_nor_t nor;
    int is_nor = strcmp(mode, "nor") == 0;
    if (is_nor) {
        memset(g_nor, 0x00, sizeof(g_nor)); /* programmed, not erased: erases are needed */
        nor.erase = nor_erase;
        nor.program = nor_program;
        nor.read = nor_read;
        nor.size = RING;
        nor.erase_block = NOR_BLOCK;
        if (nnrt_tiledev_nor_init(&dev, &nor) != NNRT_OK) {
            return 2;
        }
    } else if (nnrt_tiledev_file_init(&dev, &file, argv[1], RING) != NNRT_OK) {
        return 2;
    }
    int ahead = strncmp(mode, "ahead", 5) == 0;
    if (ahead) {
        g_inner = dev;
        dev.write = ra_write;
        dev.read = ra_read;
        dev.prefetch = ra_prefetch;
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.dev = &dev;
    cfg.key = KEY_A;
    cfg.key_len = sizeof(KEY_A);
    cfg.algorithm = NNRT_SWAP_ALG_CHACHA20_POLY1305;
    memcpy(cfg.salt, "boot", 4);
    cfg.offsets = g_off;
    cfg.lengths = g_len;
    cfg.n_tiles = TILES;
    st = nnrt_fmstore_open(&s, &cfg);
    if (st != NNRT_OK) {
        return finish(st, -1, &s);
    }
    /* inference 1: every mode writes all tiles */
    fill(1);
    (void)nnrt_fmstore_begin(&s);
    st = put_all(&s, -1);
    if (st != NNRT_OK) {
        return finish(st, -1, &s);
    }
    if (strcmp(mode, "flip") == 0) {
        if (!patch(&file, g_off[2] + 5u, NULL, 1u, 0x10u)) {
            return 2;
        }
    } else if (strcmp(mode, "wrongkey") == 0) {
        cfg.key = KEY_B;
        cfg.offsets = g_off2;
        cfg.lengths = g_len2;
        st = nnrt_fmstore_open(&s2, &cfg);
        if (st != NNRT_OK) {
            return finish(st, -1, &s2);
        }
        memcpy(g_off2, g_off, sizeof(g_off));
        memcpy(g_len2, g_len, sizeof(g_len));
        s2.inference = s.inference; /* same counter, salt, device: only the key differs */
        st = get_all(&s2, &bad);
        return finish(st, bad, &s2);
    }
    st = get_all(&s, &bad);
    if (st != NNRT_OK || strcmp(mode, "flip") == 0) {
        return finish(st, bad, &s);
    }
    /* inferences 2 and 3 (the NOR: 2 to 40) */
    for (uint32_t inf = 2; inf <= (is_nor ? 40u : 3u); inf++) {
        int stale = strcmp(mode, "stale") == 0;
        int replay = strcmp(mode, "replay") == 0;
        if (replay
            && nnrt_port_read_file_at(file.path, g_off[2], old, sizeof(old), file.length, NULL)
                   != NNRT_OK) {
            return 2;
        }
        fill(inf);
        (void)nnrt_fmstore_begin(&s);
        st = put_all(&s, stale ? 2 : -1);
        if (st != NNRT_OK) {
            return finish(st, -1, &s);
        }
        if (replay && !patch(&file, g_off[2], old, sizeof(old), 0u)) {
            return 2;
        }
        if (strcmp(mode, "ahead_flip") == 0 && inf == 3u
            && !patch(&file, g_off[1] + 5u, NULL, 1u, 0x10u)) {
            return 2;
        }
        st = get_all(&s, &bad);
        if (ahead) {
            print_ahead();
        }
        if (st != NNRT_OK) {
            return finish(st, bad, &s);
        }
    }
    if (is_nor) {
        uint32_t lo = UINT32_MAX, hi = 0u, total = 0u;
        char line[96];
        char *q = line;
        for (uint32_t b = 0; b < RING / NOR_BLOCK; b++) {
            lo = g_nor_erases[b] < lo ? g_nor_erases[b] : lo;
            hi = g_nor_erases[b] > hi ? g_nor_erases[b] : hi;
            total += g_nor_erases[b];
        }
        put_str(&q, "nor: erases=");
        put_u64(&q, total);
        put_str(&q, " min=");
        put_u64(&q, lo);
        put_str(&q, " max=");
        put_u64(&q, hi);
        *q = '\0';
        nnrt_port_log(line);
    }
    int rc = finish(NNRT_OK, -1, &s);
    nnrt_fmstore_close(&s);
    return rc;
}
