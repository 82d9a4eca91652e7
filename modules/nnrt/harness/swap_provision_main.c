/*
 * Host stand-in for provisioning the swap key into a device's key store: imports an
 * AEAD key as a PERSISTENT PSA key with a given id (psa_import_key() with
 * PSA_KEY_LIFETIME_PERSISTENT), through nnopt's host mbedTLS build, whose PSA Internal
 * Trusted Storage is files <uid>.psa_its in the working directory
 * (MBEDTLS_PSA_ITS_FILE_C; see scripts/nnopt/swap/mbedtls_build.py). `nnopt
 * swap-provision` and the swap tests run it; a device is provisioned the same way by
 * its factory firmware (same PSA calls, its own ITS: TF-M or Zephyr's
 * CONFIG_SECURE_STORAGE; see the NNRT_SWAP help in modules/nnrt/Kconfig).
 *
 *   swap_provision -i ID -k KEYHEX -a ALG [-u USAGE] [-p POLICY] [-f]
 *   swap_provision -i ID -x          destroy the key (if any)
 *
 *   -i  key id, decimal or 0x hex (PSA_KEY_ID_USER_MIN..PSA_KEY_ID_USER_MAX)
 *   -k  the key, hex               -a  NNRT_SWAP_ALG_* id (1 AES-128-GCM, 2 ChaCha20-Poly1305)
 *   -u  usage flags: 'd' DECRYPT, 'e' ENCRYPT, 'x' EXPORT (default "d")
 *   -p  permitted algorithm instead of the blob's: gcm, ccm, chachapoly
 *       (tests: keys with a policy that does not fit)
 *   -f  replace a key that already has this id
 *
 * Prints "provision: status=<psa_status_t> id=<ID>" and exits 0 on success, 1 when a
 * PSA call failed, 2 on bad usage, 3 when the id is taken (without -f).
 * No cryptography is implemented here: PSA Crypto API calls only.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnrt/swap.h"
#include "psa/crypto.h"

/* initialises the static allocator and the PSA core (src/swap/swap_psa.c) */
nnrt_status_t nnrt_swap_crypto_init(void);

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

static int report(psa_status_t st, unsigned long id, int code)
{
    printf("provision: status=%d id=%lu\n", (int)st, id);
    return code;
}

int main(int argc, char **argv)
{
    uint8_t key[32];
    long key_len = -1;
    unsigned long id = 0;
    long alg_id = 0;
    const char *usage = "d";
    const char *policy = NULL;
    int force = 0;
    int destroy = 0;
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_type_t type;
    psa_algorithm_t alg;
    psa_key_usage_t flags = 0;
    psa_key_id_t out_id = 0;
    psa_status_t st;
    const char *u;
    int a;

    for (a = 1; a < argc; ++a) {
        const char *opt = argv[a];
        const char *val = a + 1 < argc ? argv[a + 1] : NULL;
        char *end = NULL;

        if (strcmp(opt, "-f") == 0 || strcmp(opt, "-x") == 0) {
            force |= opt[1] == 'f';
            destroy |= opt[1] == 'x';
            continue;
        }
        if (val == NULL) {
            fprintf(stderr, "swap_provision: %s needs a value\n", opt);
            return 2;
        }
        ++a;
        if (strcmp(opt, "-i") == 0) {
            id = strtoul(val, &end, 0);
            if (end == val || *end != '\0') {
                id = 0;
            }
        } else if (strcmp(opt, "-k") == 0) {
            key_len = parse_hex(val, key, sizeof(key));
        } else if (strcmp(opt, "-a") == 0) {
            alg_id = strtol(val, &end, 10);
        } else if (strcmp(opt, "-u") == 0) {
            usage = val;
        } else if (strcmp(opt, "-p") == 0) {
            policy = val;
        } else {
            fprintf(stderr, "swap_provision: unknown option %s\n", opt);
            return 2;
        }
    }
    if (id < PSA_KEY_ID_USER_MIN || id > PSA_KEY_ID_USER_MAX) {
        fprintf(stderr, "swap_provision: -i must be a key id in 0x1..0x3fffffff\n");
        return 2;
    }
    if (nnrt_swap_crypto_init() != NNRT_OK) {
        return report(PSA_ERROR_BAD_STATE, id, 1);
    }
    if (destroy) {
        st = psa_destroy_key((psa_key_id_t)id);
        return report(st, id, st == PSA_SUCCESS || st == PSA_ERROR_INVALID_HANDLE ? 0 : 1);
    }
    if (alg_id == (long)NNRT_SWAP_ALG_AES_128_GCM && key_len == 16) {
        type = PSA_KEY_TYPE_AES;
        alg = PSA_ALG_GCM;
    } else if (alg_id == (long)NNRT_SWAP_ALG_CHACHA20_POLY1305 && key_len == 32) {
        type = PSA_KEY_TYPE_CHACHA20;
        alg = PSA_ALG_CHACHA20_POLY1305;
    } else {
        fprintf(stderr, "swap_provision: -a 1 needs a 16-byte -k, -a 2 a 32-byte -k\n");
        return 2;
    }
    if (policy != NULL) {
        if (strcmp(policy, "gcm") == 0) {
            alg = PSA_ALG_GCM;
        } else if (strcmp(policy, "ccm") == 0) {
            alg = PSA_ALG_CCM;
        } else if (strcmp(policy, "chachapoly") == 0) {
            alg = PSA_ALG_CHACHA20_POLY1305;
        } else {
            fprintf(stderr, "swap_provision: -p is gcm, ccm or chachapoly\n");
            return 2;
        }
    }
    for (u = usage; *u != '\0'; ++u) {
        if (*u == 'd') {
            flags |= PSA_KEY_USAGE_DECRYPT;
        } else if (*u == 'e') {
            flags |= PSA_KEY_USAGE_ENCRYPT;
        } else if (*u == 'x') {
            flags |= PSA_KEY_USAGE_EXPORT;
        } else {
            fprintf(stderr, "swap_provision: -u takes the letters d, e, x\n");
            return 2;
        }
    }
    if (force) {
        (void)psa_destroy_key((psa_key_id_t)id);
    }
    psa_set_key_id(&attr, (psa_key_id_t)id); /* also makes the lifetime PERSISTENT */
    psa_set_key_lifetime(&attr, PSA_KEY_LIFETIME_PERSISTENT);
    psa_set_key_type(&attr, type);
    psa_set_key_bits(&attr, (size_t)key_len * 8u);
    psa_set_key_usage_flags(&attr, flags);
    psa_set_key_algorithm(&attr, alg);
    st = psa_import_key(&attr, key, (size_t)key_len, &out_id);
    psa_reset_key_attributes(&attr);
    memset(key, 0, sizeof(key));
    if (st == PSA_ERROR_ALREADY_EXISTS) {
        return report(st, id, 3);
    }
    if (st != PSA_SUCCESS) {
        return report(st, id, 1);
    }
    (void)psa_purge_key(out_id);
    return report(st, (unsigned long)out_id, 0);
}
