/*
 * Test harness for the NOR tile device with a program unit (src/swap/tiledev_nor.c,
 * tests/test_swap_tiledev_nor.py): the device the Zephyr port puts over a flash
 * partition (port/zephyr/nnrt_tiledev_zephyr.c: flash_area_erase / flash_area_write /
 * flash_area_read). The simulated flash follows the rules of Zephyr's flash simulator
 * with its defaults (drivers/flash/flash_simulator.c: flash_sim_write() refuses an
 * offset or a length that is not a multiple of the write-block-size, and a write to a
 * program unit that is not erased, CONFIG_FLASH_SIMULATOR_DOUBLE_WRITES=n; erase only
 * of whole erase blocks), so a missing erase, an unaligned write or a unit programmed
 * twice fails the test where the real driver would fail.
 *
 *   tiledev_nor_test FLASH_UNIT DEVICE_UNIT TILE_BYTES INFERENCES
 *
 * A 48 KB partition of 4 KB blocks with write-block-size FLASH_UNIT, given to the NOR
 * device as program_unit DEVICE_UNIT (the same, as the Zephyr port does with
 * flash_area_align(); another value shows that the flash refuses what the device
 * then writes); per inference three
 * feature-map tiles of TILE_BYTES (sealed: + 16, so a tail inside a unit when it is
 * not a multiple) are put, then read back and compared. Prints
 * "nor: status=<S> erases=<n> min=<a> max=<b> programs=<p> refused=<r> bad=<k>"
 * (erases per block; programs: program() calls; refused: writes the flash refused;
 * bad: tiles read back wrong, never expected). Exit 0 when every tile verified, 3 on a
 * wrong tile, 10 + (-S) on a store error, 4 when the device refused the geometry
 * (init: NNRT_ERR_ARG), 2 on bad usage.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnrt/fmstore.h"
#include "nnrt/port.h"
#include "../c/test_text.h"

#define PART (48u * 1024u)
#define BLOCK 4096u
#define TILES 3u
#define MAX_TILE 8192u

static uint8_t g_flash[PART];
static uint8_t g_programmed[PART]; /* 1: the byte's unit was programmed since its erase */
static uint32_t g_erases[PART / BLOCK];
static uint32_t g_unit = 1u;
static uint32_t g_programs, g_refused;
static uint8_t g_fm[TILES][MAX_TILE];
static uint8_t g_buf[MAX_TILE + 16u] __attribute__((aligned(16)));
static uint32_t g_off[TILES], g_len[TILES];
static const uint8_t KEY[32] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3,
                                2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5};

static nnrt_status_t sim_erase(void *ctx, uint32_t offset, uint32_t len)
{
    (void)ctx;
    if (offset % BLOCK != 0u || len % BLOCK != 0u || offset + len > PART) {
        g_refused++;
        return NNRT_ERR_IO; /* flash_area_erase(): -EINVAL */
    }
    memset(g_flash + offset, 0xFF, len);
    memset(g_programmed + offset, 0, len);
    for (uint32_t b = offset / BLOCK; b < (offset + len) / BLOCK; b++) {
        g_erases[b]++;
    }
    return NNRT_OK;
}

static nnrt_status_t sim_program(void *ctx, uint32_t offset, const void *src, size_t len)
{
    const uint8_t *b = (const uint8_t *)src;
    (void)ctx;
    g_programs++;
    if (offset % g_unit != 0u || len % g_unit != 0u || offset + len > PART) {
        g_refused++;
        return NNRT_ERR_IO; /* flash_area_write(): -EINVAL */
    }
    for (size_t i = 0; i < len; i++) {
        if (g_programmed[offset + i]) {
            g_refused++;
            return NNRT_ERR_IO; /* a unit written twice without an erase: -EIO */
        }
    }
    for (size_t i = 0; i < len; i++) {
        g_flash[offset + i] &= b[i]; /* NOR: programming clears bits only */
        g_programmed[offset + i] = 1u;
    }
    return NNRT_OK;
}

static nnrt_status_t sim_read(void *ctx, uint32_t offset, void *dst, size_t len)
{
    (void)ctx;
    if (offset + len > PART) {
        return NNRT_ERR_IO;
    }
    memcpy(dst, g_flash + offset, len);
    return NNRT_OK;
}

static int report(nnrt_status_t st, uint32_t bad, uint32_t erases_total)
{
    uint32_t lo = UINT32_MAX, hi = 0u;
    char line[160];
    char *p = line;

    for (uint32_t b = 0; b < PART / BLOCK; b++) {
        lo = g_erases[b] < lo ? g_erases[b] : lo;
        hi = g_erases[b] > hi ? g_erases[b] : hi;
    }
    put_str(&p, "nor: status=");
    put_i64(&p, st);
    put_str(&p, " erases=");
    put_u64(&p, erases_total);
    put_str(&p, " min=");
    put_u64(&p, lo);
    put_str(&p, " max=");
    put_u64(&p, hi);
    put_str(&p, " programs=");
    put_u64(&p, g_programs);
    put_str(&p, " refused=");
    put_u64(&p, g_refused);
    put_str(&p, " bad=");
    put_u64(&p, bad);
    *p = '\0';
    nnrt_port_log(line);
    if (bad != 0u) {
        return 3;
    }
    return st == NNRT_OK ? 0 : 10 - (int)st;
}

int main(int argc, char **argv)
{
    static nnrt_tiledev_nor_t nor;
    static nnrt_tiledev_t dev;
    static nnrt_fmstore_t s;
    nnrt_fmstore_config_t cfg;
    nnrt_status_t st = NNRT_OK;
    uint32_t device_unit, tile_bytes, inferences, bad = 0u;

    if (argc != 5) {
        nnrt_port_log_error("usage: tiledev_nor_test FLASH_UNIT DEVICE_UNIT TILE_BYTES "
                            "INFERENCES");
        return 2;
    }
    g_unit = (uint32_t)strtoul(argv[1], NULL, 10);
    device_unit = (uint32_t)strtoul(argv[2], NULL, 10);
    tile_bytes = (uint32_t)strtoul(argv[3], NULL, 10);
    inferences = (uint32_t)strtoul(argv[4], NULL, 10);
    if (g_unit == 0u || tile_bytes == 0u || tile_bytes > MAX_TILE) {
        return 2;
    }
    memset(g_flash, 0x00, sizeof(g_flash)); /* programmed, not erased: erases are needed */
    memset(g_programmed, 1, sizeof(g_programmed));
    nor.erase = sim_erase;
    nor.program = sim_program;
    nor.read = sim_read;
    nor.size = PART;
    nor.erase_block = BLOCK;
    nor.program_unit = device_unit;
    nor.erased = 0xFFu;
    if (nnrt_tiledev_nor_init(&dev, &nor) != NNRT_OK) {
        nnrt_port_log("nor: geometry refused");
        return 4;
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.dev = &dev;
    cfg.key = KEY;
    cfg.key_len = sizeof(KEY);
    cfg.algorithm = NNRT_SWAP_ALG_CHACHA20_POLY1305;
    memcpy(cfg.salt, "nor1", 4);
    cfg.offsets = g_off;
    cfg.lengths = g_len;
    cfg.n_tiles = TILES;
    st = nnrt_fmstore_open(&s, &cfg);
    for (uint32_t inf = 1; st == NNRT_OK && inf <= inferences; inf++) {
        st = nnrt_fmstore_begin(&s);
        for (uint32_t t = 0; st == NNRT_OK && t < TILES; t++) {
            for (uint32_t i = 0; i < tile_bytes; i++) {
                g_fm[t][i] = (uint8_t)(i * 13u + t * 71u + inf * 5u + (i >> 7));
            }
            memcpy(g_buf, g_fm[t], tile_bytes);
            st = nnrt_fmstore_put(&s, t, g_buf, tile_bytes);
            if (st == NNRT_OK && g_off[t] % g_unit != 0u) {
                bad++; /* a tile not on a write block */
            }
        }
        for (uint32_t t = TILES; st == NNRT_OK && t-- > 0u;) {
            st = nnrt_fmstore_get(&s, t, g_buf, tile_bytes);
            if (st == NNRT_OK && memcmp(g_buf, g_fm[t], tile_bytes) != 0) {
                bad++;
            }
        }
    }
    nnrt_fmstore_close(&s);
    return report(st, bad, nor.erases);
}
