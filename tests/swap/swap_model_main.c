/*
 * Entry point for a model compiled with streamed weights (tests/test_swap_e2e.py):
 * takes `-b BLOB` off the command line, opens the port's external-flash device on it,
 * attaches the model's swap context, then runs the generic harness
 * (modules/nnrt/harness/runner_main.c, built as a library with
 * -Dmain=nnrt_runner_main) with the remaining arguments. This is what `nnopt run
 * --blob` does once the harness learns `-b` (scripts/nnopt/swap/README.md).
 *
 * Build with -DNNRT_SWAP_ATTACH=<name>_swap_attach -DNNRT_SWAP_STATS=<name>_swap_stats.
 * Prints "swap: attach=<status>" and, after the run, "swap: chunks=<n> bytes=<n>
 * decrypt=<n> wait=<n> flash_reads=<n> flash_stall=<n>" (counter units: instructions
 * on QEMU). Exit codes: the harness's; 10 + (-status) when attaching fails; 2 usage.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/extflash.h"
#include "nnrt/port.h"
#include "nnrt/swap.h"

#include "../c/test_text.h"

#ifndef NNRT_SWAP_ATTACH
#error "define NNRT_SWAP_ATTACH to the model's <name>_swap_attach"
#endif
#ifndef NNRT_SWAP_STATS
#error "define NNRT_SWAP_STATS to the model's <name>_swap_stats"
#endif

nnrt_status_t NNRT_SWAP_ATTACH(nnrt_extflash_t *dev);
nnrt_swap_stats_t NNRT_SWAP_STATS(void);
int nnrt_runner_main(int argc, char **argv);

#define MAX_ARGS 64

static void put_kv(char **p, const char *key, uint64_t v)
{
    put_str(p, key);
    put_u64(p, v);
}

int main(int argc, char **argv)
{
    char *rest[MAX_ARGS];
    const char *blob = NULL;
    nnrt_extflash_t *dev = NULL;
    nnrt_status_t st;
    char line[240];
    char *p = line;
    int n = 0;
    int a;
    int rc;

    if (argc > MAX_ARGS) {
        nnrt_port_log_error("swap_model: too many arguments");
        return 2;
    }
    for (a = 0; a < argc; ++a) {
        if (a > 0 && strcmp(argv[a], "-b") == 0 && a + 1 < argc) {
            blob = argv[++a];
        } else {
            rest[n++] = argv[a];
        }
    }
    if (blob == NULL) {
        nnrt_port_log_error("swap_model: -b BLOB is required");
        return 2;
    }
    st = nnrt_extflash_port_open(blob, &dev);
    if (st == NNRT_OK) {
        st = NNRT_SWAP_ATTACH(dev);
    }
    put_kv(&p, "swap: attach=", (uint64_t)(-(int64_t)st));
    *p = '\0';
    nnrt_port_log(line);
    if (st != NNRT_OK) {
        nnrt_extflash_port_close();
        return 10 + (int)(-(int)st);
    }
    rc = nnrt_runner_main(n, rest);
    {
        const nnrt_swap_stats_t s = NNRT_SWAP_STATS();
        const nnrt_extflash_stats_t f = nnrt_extflash_port_stats();

        p = line;
        put_kv(&p, "swap: chunks=", s.chunks);
        put_kv(&p, " bytes=", s.bytes);
        put_kv(&p, " decrypt=", s.decrypt_counter);
        put_kv(&p, " wait=", s.wait_counter);
        put_kv(&p, " flash_reads=", f.reads);
        put_kv(&p, " flash_stall=", f.stall_cycles);
        *p = '\0';
        nnrt_port_log(line);
    }
    nnrt_extflash_port_close();
    return rc;
}
