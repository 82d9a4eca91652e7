/*
 * The swap driver's AEAD through the PSA Crypto API: psa_crypto_init(),
 * psa_import_key() (volatile, usage DECRYPT, one algorithm) or, for a key the device
 * already holds (nnrt_swap_config_t.key_id), psa_get_key_attributes() to check its
 * policy; psa_aead_decrypt() in place; psa_destroy_key() for a key imported here,
 * psa_purge_key() for the caller's. No cryptography is implemented here.
 *
 * Compiled in with NNRT_SWAP_MBEDTLS_BUNDLED (nnopt's mbedTLS 2.28 build; see
 * scripts/nnopt/swap/mbedtls_build.py) or NNRT_SWAP_PSA (another PSA provider, e.g.
 * Zephyr's mbedTLS / TF-PSA-Crypto). Without either, every call reports
 * NNRT_ERR_UNSUPPORTED, so the runtime still builds everywhere.
 *
 * Bundled mbedTLS specifics:
 * - mbedTLS allocates the key slot's key bytes with mbedtls_calloc(); the bundled
 *   configuration routes that to memory_buffer_alloc over the static pool below, so
 *   no heap is needed (NNRT_SWAP_MBEDTLS_POOL_BYTES, default 512).
 * - on the host the bundled build also has persistent keys (MBEDTLS_PSA_CRYPTO_STORAGE_C
 *   with MBEDTLS_PSA_ITS_FILE_C: PSA ITS as files in the working directory), which is
 *   how tests and `nnopt swap-provision` stand in for a device's key store; bare-metal
 *   builds have no storage (a key id must name a key the application imported).
 * - psa_crypto_init() needs a random generator; decryption never draws from it, so
 *   the configuration uses MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG and the hook below always
 *   refuses (PSA_ERROR_INSUFFICIENT_ENTROPY): nothing on the device generates keys or
 *   nonces.
 * In-place decryption (plaintext over ciphertext, same address) is what the PSA
 * specification allows for identical buffers; mbedTLS 2.28's GCM and ChaCha20-Poly1305
 * process each block before writing it. On mbedTLS 3.6+ define
 * MBEDTLS_PSA_ASSUME_EXCLUSIVE_BUFFERS, or psa_aead_decrypt() copies both buffers to
 * the heap.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/swap.h"
#include "swap_crypto.h"

#if defined(NNRT_SWAP_MBEDTLS_BUNDLED) || defined(NNRT_SWAP_PSA)

#include "psa/crypto.h"

#if defined(NNRT_SWAP_MBEDTLS_BUNDLED)
#include "mbedtls/memory_buffer_alloc.h"

#ifndef NNRT_SWAP_MBEDTLS_POOL_BYTES
#define NNRT_SWAP_MBEDTLS_POOL_BYTES 512 /* one key (<= 32 bytes) + allocator headers */
#endif

static unsigned char g_pool[NNRT_SWAP_MBEDTLS_POOL_BYTES] __attribute__((aligned(8)));
static int g_pool_ready;

psa_status_t mbedtls_psa_external_get_random(mbedtls_psa_external_random_context_t *context,
                                             uint8_t *output, size_t output_size,
                                             size_t *output_length)
{
    (void)context;
    (void)output;
    (void)output_size;
    if (output_length != NULL) {
        *output_length = 0;
    }
    return PSA_ERROR_INSUFFICIENT_ENTROPY;
}
#endif /* NNRT_SWAP_MBEDTLS_BUNDLED */

static int alg_params(uint32_t algorithm, psa_key_type_t *type, psa_algorithm_t *alg,
                      size_t *key_bytes)
{
    if (algorithm == NNRT_SWAP_ALG_AES_128_GCM) {
        *type = PSA_KEY_TYPE_AES;
        *alg = PSA_ALG_GCM;
        *key_bytes = 16;
        return 1;
    }
    if (algorithm == NNRT_SWAP_ALG_CHACHA20_POLY1305) {
        *type = PSA_KEY_TYPE_CHACHA20;
        *alg = PSA_ALG_CHACHA20_POLY1305;
        *key_bytes = 32;
        return 1;
    }
    return 0;
}

nnrt_status_t nnrt_swap_crypto_init(void)
{
#if defined(NNRT_SWAP_MBEDTLS_BUNDLED)
    if (!g_pool_ready) {
        mbedtls_memory_buffer_alloc_init(g_pool, sizeof(g_pool));
        g_pool_ready = 1;
    }
#endif
    return psa_crypto_init() == PSA_SUCCESS ? NNRT_OK : NNRT_ERR_CRYPTO;
}

static nnrt_status_t import_key(uint32_t algorithm, const uint8_t *key, size_t key_len,
                                uint32_t *key_id, psa_key_usage_t usage)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_type_t type;
    psa_algorithm_t alg;
    psa_key_id_t id = 0;
    size_t want;
    psa_status_t st;

    if (key == NULL || key_id == NULL || !alg_params(algorithm, &type, &alg, &want)) {
        return NNRT_ERR_ARG;
    }
    if (key_len != want) {
        return NNRT_ERR_ARG;
    }
    psa_set_key_type(&attr, type);
    psa_set_key_bits(&attr, (size_t)(8u * want));
    psa_set_key_usage_flags(&attr, usage);
    psa_set_key_algorithm(&attr, alg);
    st = psa_import_key(&attr, key, key_len, &id);
    psa_reset_key_attributes(&attr);
    if (st != PSA_SUCCESS) {
        return NNRT_ERR_CRYPTO;
    }
    *key_id = (uint32_t)id;
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_crypto_import(uint32_t algorithm, const uint8_t *key, size_t key_len,
                                      uint32_t *key_id)
{
    return import_key(algorithm, key, key_len, key_id, PSA_KEY_USAGE_DECRYPT);
}

nnrt_status_t nnrt_swap_crypto_import_rw(uint32_t algorithm, const uint8_t *key,
                                         size_t key_len, uint32_t *key_id)
{
    return import_key(algorithm, key, key_len, key_id,
                      PSA_KEY_USAGE_ENCRYPT | PSA_KEY_USAGE_DECRYPT);
}

nnrt_status_t nnrt_swap_crypto_seal(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t plain_len)
{
    psa_key_type_t type;
    psa_algorithm_t alg;
    size_t want;
    size_t out_len = 0;
    psa_status_t st;

    if (nonce == NULL || buf == NULL || plain_len == 0u
        || !alg_params(algorithm, &type, &alg, &want)) {
        return NNRT_ERR_ARG;
    }
    (void)type;
    (void)want;
    /* in place, as psa_aead_decrypt above: input and output the same buffer */
    st = psa_aead_encrypt((psa_key_id_t)key_id, alg, nonce, NNRT_SWAP_NONCE_BYTES, aad,
                          aad_len, buf, plain_len, buf, plain_len + NNRT_SWAP_TAG_BYTES,
                          &out_len);
    if (st != PSA_SUCCESS || out_len != plain_len + NNRT_SWAP_TAG_BYTES) {
        memset(buf, 0, plain_len + NNRT_SWAP_TAG_BYTES);
        return NNRT_ERR_CRYPTO;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_crypto_open(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t sealed_len, size_t *plain_len)
{
    psa_key_type_t type;
    psa_algorithm_t alg;
    size_t want;
    size_t out_len = 0;
    psa_status_t st;

    if (nonce == NULL || buf == NULL || plain_len == NULL || sealed_len <= NNRT_SWAP_TAG_BYTES
        || !alg_params(algorithm, &type, &alg, &want)) {
        return NNRT_ERR_ARG;
    }
    (void)type;
    (void)want;
    st = psa_aead_decrypt((psa_key_id_t)key_id, alg, nonce, NNRT_SWAP_NONCE_BYTES, aad,
                          aad_len, buf, sealed_len, buf, sealed_len - NNRT_SWAP_TAG_BYTES,
                          &out_len);
    if (st != PSA_SUCCESS || out_len != sealed_len - NNRT_SWAP_TAG_BYTES) {
        memset(buf, 0, sealed_len);
        return st == PSA_ERROR_INVALID_SIGNATURE ? NNRT_ERR_AUTH : NNRT_ERR_CRYPTO;
    }
    *plain_len = out_len;
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_crypto_check_key(uint32_t algorithm, uint32_t key_id)
{
    psa_key_attributes_t attr = PSA_KEY_ATTRIBUTES_INIT;
    psa_key_type_t type;
    psa_algorithm_t alg;
    size_t want;
    psa_status_t st;
    int fits;

    if (key_id == 0u || !alg_params(algorithm, &type, &alg, &want)) {
        return NNRT_ERR_ARG;
    }
    st = psa_get_key_attributes((psa_key_id_t)key_id, &attr);
    if (st == PSA_ERROR_INVALID_HANDLE || st == PSA_ERROR_DOES_NOT_EXIST) {
        psa_reset_key_attributes(&attr);
        return NNRT_ERR_ARG; /* no key with this id in the key store */
    }
    if (st != PSA_SUCCESS) {
        psa_reset_key_attributes(&attr);
        return NNRT_ERR_CRYPTO; /* storage failure, corrupt key data ... */
    }
    fits = psa_get_key_type(&attr) == type && psa_get_key_bits(&attr) == 8u * want
           && psa_get_key_algorithm(&attr) == alg
           && (psa_get_key_usage_flags(&attr) & PSA_KEY_USAGE_DECRYPT) != 0u;
    psa_reset_key_attributes(&attr);
    return fits ? NNRT_OK : NNRT_ERR_ARG;
}

void nnrt_swap_crypto_destroy(uint32_t key_id)
{
    (void)psa_destroy_key((psa_key_id_t)key_id);
}

void nnrt_swap_crypto_release(uint32_t key_id)
{
    (void)psa_purge_key((psa_key_id_t)key_id);
}

#else /* no PSA Crypto provider in this build */

nnrt_status_t nnrt_swap_crypto_init(void)
{
    return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_swap_crypto_import(uint32_t algorithm, const uint8_t *key, size_t key_len,
                                      uint32_t *key_id)
{
    (void)algorithm;
    (void)key;
    (void)key_len;
    (void)key_id;
    return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_swap_crypto_open(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t sealed_len, size_t *plain_len)
{
    (void)key_id;
    (void)algorithm;
    (void)nonce;
    (void)aad;
    (void)aad_len;
    (void)plain_len;
    if (buf != NULL) {
        memset(buf, 0, sealed_len);
    }
    return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_swap_crypto_check_key(uint32_t algorithm, uint32_t key_id)
{
    (void)algorithm;
    (void)key_id;
    return NNRT_ERR_UNSUPPORTED;
}

nnrt_status_t nnrt_swap_crypto_import_rw(uint32_t algorithm, const uint8_t *key,
                                         size_t key_len, uint32_t *key_id)
{
    return nnrt_swap_crypto_import(algorithm, key, key_len, key_id);
}

nnrt_status_t nnrt_swap_crypto_seal(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t plain_len)
{
    (void)key_id;
    (void)algorithm;
    (void)nonce;
    (void)aad;
    (void)aad_len;
    if (buf != NULL) {
        memset(buf, 0, plain_len + NNRT_SWAP_TAG_BYTES);
    }
    return NNRT_ERR_UNSUPPORTED;
}

void nnrt_swap_crypto_destroy(uint32_t key_id)
{
    (void)key_id;
}

void nnrt_swap_crypto_release(uint32_t key_id)
{
    (void)key_id;
}

#endif
