/*
 * Drives the dynamic allocator (nnrt/alloc.h) with a script of operations and records
 * its state after each one, for tests/test_alloc.py to check against a Python model.
 *
 *   alloc_test SCRIPT SCRIPT_BYTES OUT
 *
 * SCRIPT (little endian): uint32 arena_bytes, uint32 n_handles, uint32 arena_skew,
 * then 8-byte records: uint8 op ('a' alloc, 'f' free, 'c' compact), uint8 0,
 * uint16 handle, uint32 size (alloc only). arena_skew (0..15) offsets the arena from
 * its alignment to check that init refuses it.
 *
 * OUT: int32 init status, then per record: int32 status, uint32 top, live_bytes,
 * high_water, n_live, compactions, uint64 bytes_moved, then uint32 offset per handle.
 *
 * Every block is filled with a pattern of (handle, allocation serial) when allocated
 * and all live blocks are checked after every operation: compaction must preserve
 * contents. Exit codes: 0 ok, 2 usage, 3 contents lost, 4 I/O.
 */
#include <stdint.h>
#include <string.h>

#include "nnrt/alloc.h"
#include "nnrt/port.h"

#define MAX_ARENA 65536u
#define MAX_HANDLES 1024u
#define MAX_SCRIPT (12u + 8u * 20000u)

static uint8_t arena[MAX_ARENA + NNRT_ARENA_ALIGN] __attribute__((aligned(NNRT_ARENA_ALIGN)));
static nnrt_dyn_block_t blocks[MAX_HANDLES];
static nnrt_dyn_handle_t order[MAX_HANDLES];
static uint32_t serial[MAX_HANDLES];
static uint8_t script[MAX_SCRIPT];
static uint8_t out[64u + 4u * MAX_HANDLES];

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static size_t wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return 4;
}

static uint8_t pattern(uint32_t h, uint32_t s, uint32_t i)
{
    return (uint8_t)(h * 31u + s * 7u + i * 13u + (i >> 8));
}

static int contents_ok(const nnrt_dyn_t *d)
{
    uint32_t k;

    for (k = 0; k < d->n_live; k++) {
        nnrt_dyn_handle_t h = d->order[k];
        const uint8_t *p = (const uint8_t *)nnrt_dyn_ptr(d, h);
        uint32_t i;

        if (p == NULL) {
            return 0;
        }
        for (i = 0; i < d->blocks[h].size; i++) {
            if (p[i] != pattern(h, serial[h], i)) {
                return 0;
            }
        }
    }
    return 1;
}

static uint32_t parse_u32(const char *s)
{
    uint32_t v = 0;

    while (*s >= '0' && *s <= '9') {
        v = v * 10u + (uint32_t)(*s++ - '0');
    }
    return v;
}

int main(int argc, char **argv)
{
    nnrt_dyn_t d;
    uint32_t bytes;
    uint32_t n_handles;
    uint32_t skew;
    uint32_t script_bytes;
    uint32_t pos;
    uint32_t alloc_serial = 0;
    nnrt_status_t s;
    size_t n;

    if (argc != 4) {
        nnrt_port_log_error("usage: alloc_test SCRIPT SCRIPT_BYTES OUT");
        return 2;
    }
    script_bytes = parse_u32(argv[2]);
    if (script_bytes < 12u || script_bytes > MAX_SCRIPT || (script_bytes - 12u) % 8u != 0u) {
        nnrt_port_log_error("alloc_test: bad script size");
        return 2;
    }
    if (nnrt_port_read_file(argv[1], script, script_bytes, NULL) != NNRT_OK) {
        nnrt_port_log_error("alloc_test: cannot read the script");
        return 4;
    }
    bytes = rd32(script);
    n_handles = rd32(script + 4);
    skew = rd32(script + 8);
    if (bytes > MAX_ARENA || n_handles > MAX_HANDLES || skew >= NNRT_ARENA_ALIGN) {
        nnrt_port_log_error("alloc_test: arena or handle count too large");
        return 2;
    }
    s = nnrt_dyn_init(&d, arena + skew, bytes, blocks, order, n_handles);
    n = wr32(out, (uint32_t)(int32_t)s);
    if (nnrt_port_write_file(argv[3], out, n, 0) != NNRT_OK) {
        return 4;
    }
    if (s != NNRT_OK) {
        return 0;
    }
    for (pos = 12u; pos < script_bytes; pos += 8u) {
        uint8_t op = script[pos];
        nnrt_dyn_handle_t h = (nnrt_dyn_handle_t)(script[pos + 2] | (script[pos + 3] << 8));
        uint32_t size = rd32(script + pos + 4);
        uint32_t i;

        if (op == 'a') {
            s = nnrt_dyn_alloc(&d, h, size);
            if (s == NNRT_OK) {
                uint8_t *p = (uint8_t *)nnrt_dyn_ptr(&d, h);

                serial[h] = ++alloc_serial;
                for (i = 0; i < size; i++) {
                    p[i] = pattern(h, serial[h], i);
                }
            }
        } else if (op == 'f') {
            s = nnrt_dyn_free(&d, h);
        } else if (op == 'c') {
            (void)nnrt_dyn_compact(&d);
            s = NNRT_OK;
        } else {
            nnrt_port_log_error("alloc_test: bad op");
            return 2;
        }
        if (!contents_ok(&d)) {
            nnrt_port_log_error("alloc_test: a live block lost its contents");
            return 3;
        }
        n = wr32(out, (uint32_t)(int32_t)s);
        n += wr32(out + n, d.top);
        n += wr32(out + n, d.live_bytes);
        n += wr32(out + n, d.high_water);
        n += wr32(out + n, d.n_live);
        n += wr32(out + n, d.compactions);
        n += wr32(out + n, (uint32_t)d.bytes_moved);
        n += wr32(out + n, (uint32_t)(d.bytes_moved >> 32));
        for (i = 0; i < n_handles; i++) {
            n += wr32(out + n, d.blocks[i].offset);
        }
        if (nnrt_port_write_file(argv[3], out, n, 1) != NNRT_OK) {
            return 4;
        }
    }
    return 0;
}
