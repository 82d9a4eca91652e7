/*
 * Test harness for the swap driver (tests/test_swap_driver.py): open a blob, read,
 * authenticate and decrypt every chunk, write the plaintexts, report the status.
 * The same file runs on the host (stdio file device, optionally ASan/UBSan) and on
 * QEMU (semihosting file device).
 *
 *   swap_reader -b BLOB (-k KEYHEX [-V] | -K ID) [-l LAYOUTHEX] [-a ALG] [-n CHUNKS]
 *               [-s STAGING] [-o OUT] [-r] [-p]
 *
 *   -b  the blob file                -k  the key, hex
 *   -K  open by PSA key id (decimal or 0x hex) of a key in the key store (host: PSA
 *       ITS files in the working directory), no key bytes
 *   -V  with -k and -a: import the key bytes as a volatile PSA key (usage DECRYPT,
 *       algorithm -a) here and open by its id; after close, check that the driver
 *       did not destroy it (prints "swap: caller key kept"), then destroy it
 *   -l  expected layout id, hex      -a  expected algorithm id (0: the blob's)
 *   -n  expected chunk count         -s  staging buffer bytes (default: the maximum)
 *   -o  write every chunk's plaintext here, in chunk order
 *   -r  read the chunks in reverse order (no prefetch: start/wait out of sequence)
 *   -p  disable prefetching (wait(k) reads k synchronously)
 *   -F  read every chunk FRAMES times in a row, as FRAMES inferences do (default 1;
 *       -o gets each frame's plaintexts); with NNRT_SWAP_PIPELINE_FRAMES=1 the driver
 *       starts frame f+1's chunk 0 after frame f's last chunk
 * Also prints "swap: device_reads=<R>": reads the device completed, counted at close.
 *
 * Prints "swap: status=<S> chunk=<K> chunks=<N> bytes=<B> decrypt=<D> wait=<W>"
 * (S the nnrt_status_t value, K the chunk where it failed or -1) and exits 0 on
 * success, 2 on bad usage, 10 + (-S) on a driver error.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/extflash.h"
#include "nnrt/port.h"
#include "nnrt/swap.h"
#include "../c/test_text.h"

#if defined(NNRT_SWAP_MBEDTLS_BUNDLED) || defined(NNRT_SWAP_PSA)
#include "psa/crypto.h"
#define SWAP_TEST_HAVE_PSA 1
#endif

#ifndef SWAP_TEST_STAGING_MAX
#define SWAP_TEST_STAGING_MAX (32u * 1024u)
#endif
#ifndef SWAP_TEST_TABLE_MAX
#define SWAP_TEST_TABLE_MAX 1024u
#endif

static uint8_t g_stage0[SWAP_TEST_STAGING_MAX] __attribute__((aligned(16)));
static uint8_t g_stage1[SWAP_TEST_STAGING_MAX] __attribute__((aligned(16)));
static uint8_t g_table[SWAP_TEST_TABLE_MAX * NNRT_SWAP_ENTRY_BYTES] __attribute__((aligned(4)));
static uint8_t g_key[64];
static uint8_t g_layout[NNRT_SWAP_LAYOUT_ID_BYTES];

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Parse hex into out (at most cap bytes): number of bytes, or -1. */
static long parse_hex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;

    while (s[0] != '\0') {
        const int hi = hexval(s[0]);
        const int lo = s[1] != '\0' ? hexval(s[1]) : -1;

        if (hi < 0 || lo < 0 || n >= cap) {
            return -1;
        }
        out[n++] = (uint8_t)(hi * 16 + lo);
        s += 2;
    }
    return (long)n;
}

static long parse_uint(const char *s)
{
    long v = 0;

    if (*s == '\0') {
        return -1;
    }
    for (; *s != '\0'; ++s) {
        if (*s < '0' || *s > '9' || v > 100000000L) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Decimal or 0x hex uint32; 0 when malformed (0 is not a key id). */
static uint32_t parse_id(const char *s)
{
    uint64_t v = 0;
    int base = 10;
    int d;

    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0') {
        return 0u;
    }
    for (; *s != '\0'; ++s) {
        d = hexval(*s);
        if (d < 0 || d >= base || v > 0xFFFFFFFFu) {
            return 0u;
        }
        v = v * (uint64_t)base + (uint64_t)d;
    }
    return v > 0xFFFFFFFFu ? 0u : (uint32_t)v;
}

#if defined(SWAP_TEST_HAVE_PSA)
nnrt_status_t nnrt_swap_crypto_init(void); /* src/swap/swap_psa.c: pool + psa_crypto_init */

/* -V: the application's own volatile key for algorithm `alg`; 0 on failure. */
static uint32_t import_volatile(long alg, const uint8_t *key, long key_len)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_id_t id = 0;
    psa_status_t st;

    if (nnrt_swap_crypto_init() != NNRT_OK) {
        return 0u;
    }
    if (alg == (long)NNRT_SWAP_ALG_AES_128_GCM && key_len == 16) {
        psa_set_key_type(&attr, PSA_KEY_TYPE_AES);
        psa_set_key_algorithm(&attr, PSA_ALG_GCM);
    } else if (alg == (long)NNRT_SWAP_ALG_CHACHA20_POLY1305 && key_len == 32) {
        psa_set_key_type(&attr, PSA_KEY_TYPE_CHACHA20);
        psa_set_key_algorithm(&attr, PSA_ALG_CHACHA20_POLY1305);
    } else {
        return 0u;
    }
    psa_set_key_bits(&attr, (size_t)key_len * 8u);
    psa_set_key_usage_flags(&attr, PSA_KEY_USAGE_DECRYPT);
    st = psa_import_key(&attr, key, (size_t)key_len, &id);
    psa_reset_key_attributes(&attr);
    return st == PSA_SUCCESS ? (uint32_t)id : 0u;
}

/* After close: the caller's key must still be there; then destroy it. */
static void check_kept(uint32_t id)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    const psa_status_t st = psa_get_key_attributes((psa_key_id_t)id, &attr);

    psa_reset_key_attributes(&attr);
    nnrt_port_log(st == PSA_SUCCESS ? "swap: caller key kept" : "swap: caller key GONE");
    (void)psa_destroy_key((psa_key_id_t)id);
}
#endif

static int report(nnrt_status_t st, int64_t chunk, const nnrt_swap_stats_t *stats)
{
    char line[200];
    char *p = line;

    put_str(&p, "swap: status=");
    put_i64(&p, (int64_t)st);
    put_str(&p, " chunk=");
    put_i64(&p, chunk);
    put_str(&p, " chunks=");
    put_u64(&p, stats->chunks);
    put_str(&p, " bytes=");
    put_u64(&p, stats->bytes);
    put_str(&p, " decrypt=");
    put_u64(&p, stats->decrypt_counter);
    put_str(&p, " wait=");
    put_u64(&p, stats->wait_counter);
    *p = '\0';
    nnrt_port_log(line);
    return st == NNRT_OK ? 0 : 10 + (int)(-(int)st);
}

/* Close the driver and the device (with -V, check that the caller's key survived),
 * then report with the driver's statistics from before the close. */
static int close_and_report(nnrt_swap_t *swap, nnrt_status_t st, int64_t chunk,
                            int import_own, uint32_t key_id)
{
    nnrt_swap_stats_t stats = nnrt_swap_stats(swap);
    nnrt_extflash_stats_t dev_stats;
    char line[64];
    char *p = line;

    nnrt_swap_close(swap); /* waits for a read still in flight (a pipelined chunk 0) */
    dev_stats = nnrt_extflash_port_stats();
    put_str(&p, "swap: device_reads=");
    put_u64(&p, dev_stats.reads);
    *p = '\0';
    nnrt_port_log(line);
    nnrt_extflash_port_close();
#if defined(SWAP_TEST_HAVE_PSA)
    if (import_own) {
        check_kept(key_id);
    }
#else
    (void)import_own;
    (void)key_id;
#endif
    return report(st, chunk, &stats);
}

int main(int argc, char **argv)
{
    const char *blob = NULL;
    const char *out = NULL;
    long key_len = -1;
    uint32_t key_id = 0;
    int by_id = 0;
    int import_own = 0;
    int have_layout = 0;
    int reverse = 0;
    int prefetch = 1;
    long alg = 0;
    long expect = 0;
    long staging = (long)SWAP_TEST_STAGING_MAX;
    long frames = 1;
    nnrt_swap_config_t cfg;
    nnrt_swap_t swap;
    nnrt_swap_stats_t zero;
    nnrt_extflash_t *dev = NULL;
    nnrt_status_t st;
    uint32_t n;
    uint32_t i;
    int a;

    memset(&zero, 0, sizeof(zero));
    for (a = 1; a < argc; ++a) {
        const char *opt = argv[a];
        const char *val = a + 1 < argc ? argv[a + 1] : NULL;

        if (strcmp(opt, "-r") == 0) {
            reverse = 1;
            continue;
        }
        if (strcmp(opt, "-p") == 0) {
            prefetch = 0;
            continue;
        }
        if (strcmp(opt, "-V") == 0) {
            import_own = 1;
            continue;
        }
        if (val == NULL) {
            nnrt_port_log_error("swap_reader: option needs a value");
            return 2;
        }
        ++a;
        if (strcmp(opt, "-b") == 0) {
            blob = val;
        } else if (strcmp(opt, "-o") == 0) {
            out = val;
        } else if (strcmp(opt, "-k") == 0) {
            key_len = parse_hex(val, g_key, sizeof(g_key));
        } else if (strcmp(opt, "-K") == 0) {
            key_id = parse_id(val);
            by_id = 1;
        } else if (strcmp(opt, "-l") == 0) {
            have_layout = parse_hex(val, g_layout, sizeof(g_layout)) == (long)sizeof(g_layout);
            if (!have_layout) {
                nnrt_port_log_error("swap_reader: bad layout id");
                return 2;
            }
        } else if (strcmp(opt, "-a") == 0) {
            alg = parse_uint(val);
        } else if (strcmp(opt, "-n") == 0) {
            expect = parse_uint(val);
        } else if (strcmp(opt, "-s") == 0) {
            staging = parse_uint(val);
        } else if (strcmp(opt, "-F") == 0) {
            frames = parse_uint(val);
        } else {
            nnrt_port_log_error("swap_reader: unknown option");
            return 2;
        }
    }
    if (blob == NULL || (key_len < 0) == !by_id || (import_own && by_id) || alg < 0
        || expect < 0 || staging <= 0 || staging > (long)SWAP_TEST_STAGING_MAX
        || frames < 1) {
        nnrt_port_log_error("usage: swap_reader -b BLOB (-k KEYHEX [-V] | -K ID) [-l ID] "
                            "[-a ALG] [-n N] [-s STAGING] [-o OUT] [-r] [-p]");
        return 2;
    }
    if (import_own) {
#if defined(SWAP_TEST_HAVE_PSA)
        key_id = import_volatile(alg, g_key, key_len);
#endif
        if (key_id == 0u) {
            nnrt_port_log_error("swap_reader: -V: cannot import the key (needs -a and a "
                                "key of its length, and a PSA build)");
            return 2;
        }
        by_id = 1;
    }
    st = nnrt_extflash_port_open(blob, &dev);
    if (st != NNRT_OK) {
        return report(st, -1, &zero);
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.dev = dev;
    if (by_id) {
        cfg.key_id = key_id; /* key stays NULL: the key store's key */
    } else {
        cfg.key = g_key;
        cfg.key_len = (size_t)key_len;
    }
    cfg.algorithm = (uint32_t)alg;
    cfg.layout_id = have_layout ? g_layout : NULL;
    cfg.expect_chunks = (uint32_t)expect;
    cfg.staging[0] = g_stage0;
    cfg.staging[1] = g_stage1;
    cfg.staging_bytes = (size_t)staging;
    cfg.table = g_table;
    cfg.table_capacity = SWAP_TEST_TABLE_MAX;
    cfg.prefetch_next = prefetch && !reverse;
    st = nnrt_swap_open(&swap, &cfg);
    if (st != NNRT_OK) {
        nnrt_extflash_port_close();
#if defined(SWAP_TEST_HAVE_PSA)
        if (import_own) {
            check_kept(key_id);
        }
#endif
        return report(st, -1, &zero);
    }
    n = nnrt_swap_chunk_count(&swap);
    if (out != NULL && nnrt_port_write_file(out, NULL, 0, 0) != NNRT_OK) {
        nnrt_port_log_error("swap_reader: cannot write the output file");
        return 2;
    }
    for (long f = 0; f < frames && st == NNRT_OK; ++f) {
    if (!reverse && prefetch) {
        st = nnrt_swap_start(&swap, 0); /* a no-op when chunk 0 is already in flight */
    }
    for (i = 0; st == NNRT_OK && i < n; ++i) {
        const uint32_t k = reverse ? n - 1u - i : i;
        const uint8_t *data = NULL;
        size_t len = 0;
        nnrt_swap_chunk_t info;

        st = nnrt_swap_wait(&swap, k, &data, &len);
        if (st != NNRT_OK) {
            return close_and_report(&swap, st, (int64_t)k, import_own, key_id);
        }
        if (nnrt_swap_chunk_info(&swap, k, &info) != NNRT_OK || info.plain_bytes != len) {
            st = NNRT_ERR_INTERNAL;
            break;
        }
        if (out != NULL && !reverse && nnrt_port_write_file(out, data, len, 1) != NNRT_OK) {
            st = NNRT_ERR_IO;
        }
    }
    }
    return close_and_report(&swap, st, st == NNRT_OK ? -1 : (int64_t)i, import_own, key_id);
}
