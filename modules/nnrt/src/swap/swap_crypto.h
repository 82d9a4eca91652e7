/*
 * The swap driver's crypto backend (internal to src/swap): PSA Crypto AEAD in
 * swap_psa.c. Algorithms are NNRT_SWAP_ALG_* ids.
 */
#ifndef NNRT_SRC_SWAP_CRYPTO_H_
#define NNRT_SRC_SWAP_CRYPTO_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

/** psa_crypto_init() (idempotent). NNRT_ERR_UNSUPPORTED without a backend. */
nnrt_status_t nnrt_swap_crypto_init(void);

/** Import a volatile decrypt-only AEAD key; NNRT_ERR_ARG for a wrong key length. */
nnrt_status_t nnrt_swap_crypto_import(uint32_t algorithm, const uint8_t *key, size_t key_len,
                                      uint32_t *key_id);

/**
 * Authenticate and decrypt `sealed_len` bytes (ciphertext then tag) in place in `buf`.
 * On NNRT_OK `*plain_len` = sealed_len - tag; on NNRT_ERR_AUTH (tag mismatch) or
 * NNRT_ERR_CRYPTO the whole of `buf[0, sealed_len)` is zeroed.
 */
nnrt_status_t nnrt_swap_crypto_open(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t sealed_len, size_t *plain_len);

/**
 * Check a key the caller already has in the key store (persistent, or imported or
 * derived by the application) against the blob's algorithm: type and size, permitted
 * algorithm (exactly the AEAD's) and usage (DECRYPT), with psa_get_key_attributes().
 * NNRT_OK; NNRT_ERR_ARG when no key has that id (PSA_ERROR_INVALID_HANDLE /
 * DOES_NOT_EXIST) or the key does not fit; NNRT_ERR_CRYPTO when the key store failed.
 */
nnrt_status_t nnrt_swap_crypto_check_key(uint32_t algorithm, uint32_t key_id);

/** Import a volatile AEAD key that may seal and open (usage ENCRYPT | DECRYPT): the
 *  feature-map tile store's key (nnrt/fmstore.h). NNRT_ERR_ARG for a wrong length. */
nnrt_status_t nnrt_swap_crypto_import_rw(uint32_t algorithm, const uint8_t *key,
                                         size_t key_len, uint32_t *key_id);

/**
 * Seal `plain_len` bytes at `buf` in place: on NNRT_OK `buf[0, plain_len)` holds the
 * ciphertext and `buf[plain_len, plain_len + tag)` the tag (the caller provides that
 * room). On an error `buf` is zeroed.
 */
nnrt_status_t nnrt_swap_crypto_seal(uint32_t key_id, uint32_t algorithm, const uint8_t *nonce,
                                    const uint8_t *aad, size_t aad_len, uint8_t *buf,
                                    size_t plain_len);

/** Destroy a key imported by nnrt_swap_crypto_import(). */
void nnrt_swap_crypto_destroy(uint32_t key_id);

/** Drop the RAM copy of a caller's key without destroying it (psa_purge_key(): a
 *  persistent key stays in storage, a volatile key is untouched). */
void nnrt_swap_crypto_release(uint32_t key_id);

#endif /* NNRT_SRC_SWAP_CRYPTO_H_ */
