/*
 * Runs a model blob (nnrt/loader.h) on the host or bare metal: the loader's harness.
 *
 *   blob_runner -b BLOB -n BLOB_BYTES [-i IN ...] [-o OUT ...] [-t TRACE] [-c]
 *
 *   -b, -n  the blob file and its exact size in bytes
 *   -i/-o   one per model input / output (raw tensor bytes), in order
 *   -t      trace file: `uint32 tensor, uint32 bytes, data` per produced tensor, then
 *           the allocator record (tensor NNRT_DYN_TRACE_STATS: high water, capacity,
 *           bytes moved low/high, compactions)
 *   -c      check only: validate the blob (nnrt_loader_check) and open it
 *
 * Prints "loader: status=S" (and, when it ran, high_water/bytes_moved) and, on QEMU,
 * "nnrt: instructions=N" counted around nnrt_loader_invoke().
 * Exit codes: 0 ok, 2 usage, 3 file I/O, 10 - status for a loader error (e.g. 15 for
 * NNRT_ERR_FORMAT, 12 for NNRT_ERR_UNSUPPORTED, 16 for NNRT_ERR_NOMEM).
 *
 * Buffers are static: NNRT_RUNNER_BLOB_MAX, NNRT_RUNNER_ARENA_MAX and
 * NNRT_RUNNER_WORK_MAX bytes (defines).
 */
#include <stdint.h>
#include <string.h>

#include "nnrt/loader.h"
#include "nnrt/port.h"

#ifndef NNRT_RUNNER_BLOB_MAX
#define NNRT_RUNNER_BLOB_MAX (1024u * 1024u)
#endif
#ifndef NNRT_RUNNER_ARENA_MAX
#define NNRT_RUNNER_ARENA_MAX (256u * 1024u)
#endif
#ifndef NNRT_RUNNER_WORK_MAX
#define NNRT_RUNNER_WORK_MAX (16u * 1024u)
#endif
#define MAX_IO 16

static uint8_t blob[NNRT_RUNNER_BLOB_MAX] __attribute__((aligned(16)));
static uint8_t arena[NNRT_RUNNER_ARENA_MAX] __attribute__((aligned(NNRT_ARENA_ALIGN)));
static uint32_t work[NNRT_RUNNER_WORK_MAX / 4u];
static nnrt_loader_t ld;
static const char *trace_path;
static int trace_failed;
static uint64_t trace_ticks;

static void put_u64(char *buf, size_t *n, uint64_t v)
{
    char d[21];
    size_t k = 0;

    do {
        d[k++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (k > 0) {
        buf[(*n)++] = d[--k];
    }
}

static void put_str(char *buf, size_t *n, const char *s)
{
    while (*s != '\0') {
        buf[(*n)++] = *s++;
    }
}

static uint32_t parse_u32(const char *s)
{
    uint32_t v = 0;

    while (*s >= '0' && *s <= '9') {
        v = v * 10u + (uint32_t)(*s++ - '0');
    }
    return v;
}

static void trace(void *user, uint32_t tensor, const void *data, size_t bytes)
{
    uint8_t h[8];
    unsigned i;
    uint64_t t0 = nnrt_port_counter();

    (void)user;
    for (i = 0; i < 4; i++) {
        h[i] = (uint8_t)(tensor >> (8 * i));
        h[4 + i] = (uint8_t)((uint32_t)bytes >> (8 * i));
    }
    if (nnrt_port_write_file(trace_path, h, sizeof(h), 1) != NNRT_OK ||
        nnrt_port_write_file(trace_path, data, bytes, 1) != NNRT_OK) {
        trace_failed = 1;
    }
    trace_ticks += nnrt_port_counter() - t0;
}

static int finish(nnrt_status_t s, int ran)
{
    char line[160];
    size_t n = 0;

    put_str(line, &n, "loader: status=");
    if (s < 0) {
        put_str(line, &n, "-");
        put_u64(line, &n, (uint64_t)(-(int32_t)s));
    } else {
        put_u64(line, &n, (uint64_t)s);
    }
    if (ran) {
        put_str(line, &n, " high_water=");
        put_u64(line, &n, ld.dyn.high_water);
        put_str(line, &n, " bytes_moved=");
        put_u64(line, &n, ld.dyn.bytes_moved);
    }
    line[n] = '\0';
    nnrt_port_log(line);
    return s == NNRT_OK ? 0 : 10 - (int)s;
}

int main(int argc, char **argv)
{
    const char *blob_path = NULL;
    const char *in[MAX_IO];
    const char *out[MAX_IO];
    uint32_t n_in = 0;
    uint32_t n_out = 0;
    uint32_t blob_bytes = 0;
    int check_only = 0;
    uint32_t i;
    int a;
    nnrt_loader_needs_t needs;
    nnrt_status_t s;
    uint64_t t0;
    uint64_t t1;

    for (a = 1; a < argc; a++) {
        const char *o = argv[a];

        if (strcmp(o, "-c") == 0) {
            check_only = 1;
            continue;
        }
        if (a + 1 >= argc || o[0] != '-' || o[1] == '\0' || o[2] != '\0') {
            nnrt_port_log_error("usage: blob_runner -b BLOB -n BYTES [-i IN] [-o OUT] [-t T] [-c]");
            return 2;
        }
        a++;
        if (o[1] == 'b') {
            blob_path = argv[a];
        } else if (o[1] == 'n') {
            blob_bytes = parse_u32(argv[a]);
        } else if (o[1] == 'i' && n_in < MAX_IO) {
            in[n_in++] = argv[a];
        } else if (o[1] == 'o' && n_out < MAX_IO) {
            out[n_out++] = argv[a];
        } else if (o[1] == 't') {
            trace_path = argv[a];
        } else {
            nnrt_port_log_error("blob_runner: bad argument");
            return 2;
        }
    }
    if (blob_path == NULL || blob_bytes > NNRT_RUNNER_BLOB_MAX) {
        nnrt_port_log_error("blob_runner: no blob, or larger than NNRT_RUNNER_BLOB_MAX");
        return 2;
    }
    if (nnrt_port_read_file(blob_path, blob, blob_bytes, NULL) != NNRT_OK) {
        nnrt_port_log_error("blob_runner: cannot read the blob");
        return 3;
    }
    s = nnrt_loader_check(blob, blob_bytes, &needs);
    if (s != NNRT_OK) {
        return finish(s, 0);
    }
    if (needs.arena_bytes > sizeof(arena) || needs.work_bytes > sizeof(work)) {
        return finish(NNRT_ERR_NOMEM, 0);
    }
    s = nnrt_loader_open(&ld, blob, blob_bytes, arena, sizeof(arena), work, sizeof(work));
    if (s != NNRT_OK || check_only) {
        return finish(s, 0);
    }
    if (n_in != needs.n_inputs || (n_out != 0u && n_out != needs.n_outputs)) {
        nnrt_port_log_error("blob_runner: wrong number of -i or -o for this model");
        return 2;
    }
    for (i = 0; i < n_in; i++) {
        size_t bytes = 0;
        void *dst = nnrt_loader_input(&ld, i, &bytes);

        if (dst == NULL || nnrt_port_read_file(in[i], dst, bytes, NULL) != NNRT_OK) {
            nnrt_port_log_error("blob_runner: cannot read an input (missing or wrong size)");
            return 3;
        }
    }
    if (trace_path != NULL) {
        if (nnrt_port_write_file(trace_path, NULL, 0, 0) != NNRT_OK) {
            return 3;
        }
        nnrt_loader_set_trace(&ld, trace, NULL);
    }
    t0 = nnrt_port_counter();
    s = nnrt_loader_invoke(&ld);
    t1 = nnrt_port_counter();
    if (nnrt_port_counter_unit() != NULL &&
        strcmp(nnrt_port_counter_unit(), "instructions") == 0) {
        char line[64];
        size_t n = 0;

        put_str(line, &n, "nnrt: instructions=");
        put_u64(line, &n, t1 - t0 - trace_ticks);
        line[n] = '\0';
        nnrt_port_log(line);
    }
    if (s != NNRT_OK) {
        return finish(s, 1);
    }
    for (i = 0; i < n_out; i++) {
        size_t bytes = 0;
        const void *src = nnrt_loader_output(&ld, i, &bytes);

        if (src == NULL || nnrt_port_write_file(out[i], src, bytes, 0) != NNRT_OK) {
            return 3;
        }
    }
    if (trace_path != NULL) {
        uint32_t st[5];

        st[0] = ld.dyn.high_water;
        st[1] = ld.dyn.capacity;
        st[2] = (uint32_t)ld.dyn.bytes_moved;
        st[3] = (uint32_t)(ld.dyn.bytes_moved >> 32);
        st[4] = ld.dyn.compactions;
        trace(NULL, NNRT_DYN_TRACE_STATS, st, sizeof(st));
        if (trace_failed) {
            return 3;
        }
    }
    return finish(s, 1);
}
