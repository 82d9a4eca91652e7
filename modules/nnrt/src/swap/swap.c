/*
 * The swap driver (see nnrt/swap.h): blob header and table checks, double-buffered
 * asynchronous chunk reads, in-place authenticated decryption (swap_psa.c).
 *
 * Every field read from the blob is checked before use, in 64-bit arithmetic where a
 * sum could wrap; a read never reaches past the device, a staging buffer or the
 * caller's table. The blob's bytes are untrusted until a chunk's tag verifies, and
 * the tag covers the header and the chunk's table entry as well.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/port.h"
#include "nnrt/swap.h"
#include "swap_crypto.h"

/* header field offsets (scripts/nnopt/swap/sealed_blob.py) */
#define H_MAGIC 0u
#define H_VERSION 4u
#define H_HEADER_BYTES 6u
#define H_ALG 8u
#define H_TAG_BYTES 9u
#define H_ENTRY_BYTES 10u
#define H_CHUNKS 12u
#define H_TABLE_OFFSET 16u
#define H_DATA_OFFSET 20u
#define H_BLOB_BYTES 24u
#define H_MAX_PLAIN 28u
#define H_LAYOUT_ID 32u
#define H_SALT 48u
#define H_FLAGS 56u
#define H_RESERVED 60u
/* table entry field offsets */
#define E_OFFSET 0u
#define E_SEALED 4u
#define E_TENSOR 8u
#define E_C0 12u
#define E_C1 14u
#define E_NONCE 16u
#define E_RESERVED 28u

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
           | ((uint32_t)p[3] << 24);
}

static const uint8_t *entry_of(const nnrt_swap_t *s, uint32_t k)
{
    if (s->slots != NULL) { /* table on demand: the entry loaded when k was issued */
        return s->slot_k[k % 2u] == (int32_t)k ? s->slots + (k % 2u) * NNRT_SWAP_ENTRY_BYTES
                                                : NULL;
    }
    return s->table + (size_t)k * NNRT_SWAP_ENTRY_BYTES;
}

static nnrt_status_t fail(nnrt_swap_t *s, nnrt_status_t st)
{
    if (s->error == NNRT_OK) {
        s->error = st;
    }
    return s->error;
}

/* A blocking read through the device (open only). */
static nnrt_status_t dev_read(nnrt_extflash_t *dev, uint32_t offset, size_t len, void *dst)
{
    nnrt_status_t st = dev->read_start(dev, offset, len, dst);

    if (st != NNRT_OK) {
        return st == NNRT_ERR_ARG ? NNRT_ERR_FORMAT : st;
    }
    return dev->read_wait(dev);
}

static nnrt_status_t check_header(const uint8_t *h, const nnrt_swap_config_t *cfg,
                                  uint32_t dev_size)
{
    const uint32_t n = rd32(h + H_CHUNKS);
    const uint32_t alg = h[H_ALG];
    const uint64_t table_end = (uint64_t)NNRT_SWAP_HEADER_BYTES
                               + (uint64_t)n * NNRT_SWAP_ENTRY_BYTES;
    const uint64_t data_offset = (table_end + NNRT_SWAP_CHUNK_ALIGN - 1u)
                                 / NNRT_SWAP_CHUNK_ALIGN * NNRT_SWAP_CHUNK_ALIGN;
    const uint32_t blob_bytes = rd32(h + H_BLOB_BYTES);
    const uint32_t max_plain = rd32(h + H_MAX_PLAIN);

    if (rd32(h + H_MAGIC) != NNRT_SWAP_MAGIC || rd16(h + H_VERSION) != NNRT_SWAP_FORMAT_VERSION
        || rd16(h + H_HEADER_BYTES) != NNRT_SWAP_HEADER_BYTES
        || h[H_TAG_BYTES] != NNRT_SWAP_TAG_BYTES
        || rd16(h + H_ENTRY_BYTES) != NNRT_SWAP_ENTRY_BYTES
        || rd32(h + H_TABLE_OFFSET) != NNRT_SWAP_HEADER_BYTES || rd32(h + H_FLAGS) != 0u
        || rd32(h + H_RESERVED) != 0u) {
        return NNRT_ERR_FORMAT;
    }
    if ((alg != NNRT_SWAP_ALG_AES_128_GCM && alg != NNRT_SWAP_ALG_CHACHA20_POLY1305)
        || (cfg->algorithm != 0u && alg != cfg->algorithm)) {
        return NNRT_ERR_FORMAT;
    }
    if (n == 0u || (!cfg->table_on_demand && n > cfg->table_capacity)
        || (cfg->expect_chunks != 0u && n != cfg->expect_chunks)
        || rd32(h + H_DATA_OFFSET) != data_offset || data_offset > blob_bytes
        || blob_bytes > dev_size) {
        return NNRT_ERR_FORMAT;
    }
    if (max_plain == 0u
        || (uint64_t)max_plain + NNRT_SWAP_TAG_BYTES > (uint64_t)cfg->staging_bytes) {
        return NNRT_ERR_FORMAT;
    }
    if (cfg->layout_id != NULL
        && memcmp(h + H_LAYOUT_ID, cfg->layout_id, NNRT_SWAP_LAYOUT_ID_BYTES) != 0) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

static nnrt_status_t check_entry(const uint8_t *h, const uint8_t *e, uint32_t k)
{
    const uint32_t offset = rd32(e + E_OFFSET);
    const uint32_t sealed = rd32(e + E_SEALED);
    uint8_t idx[4];

    idx[0] = (uint8_t)k;
    idx[1] = (uint8_t)(k >> 8);
    idx[2] = (uint8_t)(k >> 16);
    idx[3] = (uint8_t)(k >> 24);
    if (offset < rd32(h + H_DATA_OFFSET) || offset % NNRT_SWAP_CHUNK_ALIGN != 0u
        || sealed <= NNRT_SWAP_TAG_BYTES
        || (uint64_t)offset + sealed > (uint64_t)rd32(h + H_BLOB_BYTES)
        || sealed - NNRT_SWAP_TAG_BYTES > rd32(h + H_MAX_PLAIN)
        || rd16(e + E_C0) >= rd16(e + E_C1)
        /* a depth slice [k0, k1) (k0 | k1 << 16, fully connected rows in pieces) or 0 */
        || (rd32(e + E_RESERVED) != 0u && rd16(e + E_RESERVED) >= rd16(e + E_RESERVED + 2u))
        || memcmp(e + E_NONCE, h + H_SALT, NNRT_SWAP_SALT_BYTES) != 0
        || memcmp(e + E_NONCE + NNRT_SWAP_SALT_BYTES, idx, 4) != 0) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_open(nnrt_swap_t *s, const nnrt_swap_config_t *cfg)
{
    nnrt_status_t st;
    uint32_t n;
    uint32_t k;

    if (s == NULL) {
        return NNRT_ERR_ARG;
    }
    memset(s, 0, sizeof(*s));
    s->inflight = -1;
    if (cfg == NULL || cfg->dev == NULL || cfg->dev->read_start == NULL
        || cfg->dev->read_wait == NULL || (cfg->key == NULL) == (cfg->key_id == 0u)
        || cfg->staging[0] == NULL
        || cfg->staging[1] == NULL || cfg->staging[0] == cfg->staging[1]
        || cfg->staging_bytes <= NNRT_SWAP_TAG_BYTES || cfg->staging_bytes > 0xFFFFFFFFu
        || cfg->table == NULL || cfg->table_capacity == 0u
        || (cfg->table_on_demand && cfg->table_capacity < 2u)) {
        return NNRT_ERR_ARG;
    }
    if (cfg->dev->size < NNRT_SWAP_HEADER_BYTES) {
        return NNRT_ERR_FORMAT;
    }
    st = dev_read(cfg->dev, 0u, NNRT_SWAP_HEADER_BYTES, s->header);
    if (st != NNRT_OK) {
        return st;
    }
    st = check_header(s->header, cfg, cfg->dev->size);
    if (st != NNRT_OK) {
        return st;
    }
    n = rd32(s->header + H_CHUNKS);
    if (cfg->table_on_demand) {
        /* each entry read and checked when its chunk's read is issued */
        s->slots = cfg->table;
        s->slot_k[0] = -1;
        s->slot_k[1] = -1;
    } else {
        /* n <= table_capacity was checked: the table fits the caller's buffer */
        st = dev_read(cfg->dev, NNRT_SWAP_HEADER_BYTES, (size_t)n * NNRT_SWAP_ENTRY_BYTES,
                      cfg->table);
        if (st != NNRT_OK) {
            return st;
        }
        for (k = 0; k < n; ++k) {
            st = check_entry(s->header, cfg->table + (size_t)k * NNRT_SWAP_ENTRY_BYTES, k);
            if (st != NNRT_OK) {
                return st;
            }
        }
    }
    st = nnrt_swap_crypto_init();
    if (st != NNRT_OK) {
        return st;
    }
    if (cfg->key != NULL) {
        st = nnrt_swap_crypto_import(s->header[H_ALG], cfg->key, cfg->key_len, &s->key_id);
        if (st != NNRT_OK) {
            return st;
        }
        s->key_owned = 1;
    } else {
        /* the caller's key (key store): checked, used, never destroyed here */
        st = nnrt_swap_crypto_check_key(s->header[H_ALG], cfg->key_id);
        if (st != NNRT_OK) {
            nnrt_swap_crypto_release(cfg->key_id);
            return st;
        }
        s->key_id = cfg->key_id;
        s->key_owned = 0;
    }
    s->key_valid = 1;
    s->dev = cfg->dev;
    s->table = cfg->table;
    s->n_chunks = n;
    s->algorithm = s->header[H_ALG];
    s->max_plain = rd32(s->header + H_MAX_PLAIN);
    s->staging[0] = cfg->staging[0];
    s->staging[1] = cfg->staging[1];
    s->staging_bytes = cfg->staging_bytes;
    s->prefetch_next = cfg->prefetch_next;
    s->error = NNRT_OK;
    s->is_open = 1;
    return NNRT_OK;
}

/*
 * NNRT_SWAP_PIPELINE_FRAMES (default 0; Zephyr: CONFIG_NNRT_SWAP_PIPELINE_FRAMES): after
 * the last chunk of an inference, start reading chunk 0 of the next (SwapNN's pipelining
 * across frames). It helps when a model's first streamed op comes early, so chunk 0's
 * read cannot hide behind the ops before it; it costs nothing else (the buffer is free).
 */
#ifndef NNRT_SWAP_PIPELINE_FRAMES
#define NNRT_SWAP_PIPELINE_FRAMES 0
#endif

/* Wait for the read in flight (if any); its status. */
static nnrt_status_t finish_inflight(nnrt_swap_t *s)
{
    uint64_t t0;
    nnrt_status_t st;

    if (s->inflight < 0) {
        return NNRT_OK;
    }
    t0 = nnrt_port_counter();
    st = s->dev->read_wait(s->dev);
    s->stats.wait_counter += nnrt_port_counter() - t0;
    s->inflight = -1;
    return st == NNRT_ERR_ARG ? NNRT_ERR_INTERNAL : st;
}

static nnrt_status_t issue(nnrt_swap_t *s, uint32_t k)
{
    const uint8_t *e;
    const int buf = s->next_buf;
    nnrt_status_t st;

    if (s->slots != NULL && s->slot_k[k % 2u] != (int32_t)k) {
        /* table on demand: chunk k's entry, read (no read is in flight) and checked */
        uint8_t *slot = s->slots + (k % 2u) * NNRT_SWAP_ENTRY_BYTES;

        s->slot_k[k % 2u] = -1;
        st = dev_read(s->dev, NNRT_SWAP_HEADER_BYTES + k * NNRT_SWAP_ENTRY_BYTES,
                      NNRT_SWAP_ENTRY_BYTES, slot);
        if (st == NNRT_OK) {
            st = check_entry(s->header, slot, k);
        }
        if (st != NNRT_OK) {
            return st;
        }
        s->slot_k[k % 2u] = (int32_t)k;
    }
    e = entry_of(s, k);
    if (e == NULL) {
        return NNRT_ERR_INTERNAL;
    }
    st = s->dev->read_start(s->dev, rd32(e + E_OFFSET), rd32(e + E_SEALED), s->staging[buf]);
    if (st != NNRT_OK) {
        return st == NNRT_ERR_ARG ? NNRT_ERR_INTERNAL : st;
    }
    s->inflight = (int32_t)k;
    s->inflight_buf = buf;
    s->next_buf = 1 - buf;
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_start(nnrt_swap_t *s, uint32_t k)
{
    nnrt_status_t st;

    if (s == NULL || !s->is_open) {
        return NNRT_ERR_ARG;
    }
    if (s->error != NNRT_OK) {
        return s->error;
    }
    if (k >= s->n_chunks) {
        return NNRT_ERR_ARG;
    }
    if (s->inflight == (int32_t)k) {
        return NNRT_OK;
    }
    st = finish_inflight(s);
    if (st != NNRT_OK) {
        return fail(s, st);
    }
    st = issue(s, k);
    return st == NNRT_OK ? NNRT_OK : fail(s, st);
}

nnrt_status_t nnrt_swap_wait(nnrt_swap_t *s, uint32_t k, const uint8_t **data, size_t *len)
{
    uint8_t aad[NNRT_SWAP_HEADER_BYTES + NNRT_SWAP_ENTRY_BYTES];
    const uint8_t *e;
    uint8_t *buf;
    size_t plain = 0;
    uint64_t t0;
    nnrt_status_t st;

    if (data != NULL) {
        *data = NULL;
    }
    if (len != NULL) {
        *len = 0;
    }
    if (s == NULL || data == NULL || !s->is_open) {
        return NNRT_ERR_ARG;
    }
    if (s->error != NNRT_OK) {
        return s->error;
    }
    if (k >= s->n_chunks) {
        return NNRT_ERR_ARG;
    }
    if (s->inflight != (int32_t)k) {
        st = nnrt_swap_start(s, k);
        if (st != NNRT_OK) {
            return st;
        }
    }
    buf = s->staging[s->inflight_buf];
    st = finish_inflight(s);
    if (st != NNRT_OK) {
        return fail(s, st);
    }
    if (s->prefetch_next && k + 1u < s->n_chunks) {
        st = issue(s, k + 1u);
        if (st != NNRT_OK) {
            return fail(s, st);
        }
    }
#if NNRT_SWAP_PIPELINE_FRAMES
    else if (s->prefetch_next && k + 1u == s->n_chunks) {
        /* Pipelining across frames: the next inference's chunk 0 loads into the free
         * staging buffer during this one's tail (its nnrt_swap_start(0) then finds it in
         * flight). Authenticated when it is waited for, like any chunk. */
        st = issue(s, 0u);
        if (st != NNRT_OK) {
            return fail(s, st);
        }
    }
#endif
    e = entry_of(s, k);
    if (e == NULL) {
        return fail(s, NNRT_ERR_INTERNAL);
    }
    memcpy(aad, s->header, NNRT_SWAP_HEADER_BYTES);
    memcpy(aad + NNRT_SWAP_HEADER_BYTES, e, NNRT_SWAP_ENTRY_BYTES);
    t0 = nnrt_port_counter();
    st = nnrt_swap_crypto_open(s->key_id, s->algorithm, e + E_NONCE, aad, sizeof(aad), buf,
                               rd32(e + E_SEALED), &plain);
    s->stats.decrypt_counter += nnrt_port_counter() - t0;
    if (st != NNRT_OK) {
        return fail(s, st);
    }
    s->stats.chunks++;
    s->stats.bytes += rd32(e + E_SEALED);
    *data = buf;
    if (len != NULL) {
        *len = plain;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_swap_chunk_info(const nnrt_swap_t *s, uint32_t k, nnrt_swap_chunk_t *info)
{
    const uint8_t *e;

    if (s == NULL || info == NULL || !s->is_open || k >= s->n_chunks) {
        return NNRT_ERR_ARG;
    }
    e = entry_of(s, k);
    if (e == NULL) {
        return NNRT_ERR_ARG; /* table on demand: k's entry is not loaded */
    }
    info->offset = rd32(e + E_OFFSET);
    info->sealed_bytes = rd32(e + E_SEALED);
    info->plain_bytes = info->sealed_bytes - NNRT_SWAP_TAG_BYTES;
    info->tensor = rd32(e + E_TENSOR);
    info->c0 = (uint16_t)rd16(e + E_C0);
    info->c1 = (uint16_t)rd16(e + E_C1);
    return NNRT_OK;
}

uint32_t nnrt_swap_chunk_count(const nnrt_swap_t *s)
{
    return (s != NULL && s->is_open) ? s->n_chunks : 0u;
}

nnrt_swap_stats_t nnrt_swap_stats(const nnrt_swap_t *s)
{
    nnrt_swap_stats_t zero;

    if (s == NULL) {
        memset(&zero, 0, sizeof(zero));
        return zero;
    }
    return s->stats;
}

void nnrt_swap_close(nnrt_swap_t *s)
{
    if (s == NULL) {
        return;
    }
    if (s->is_open && s->inflight >= 0) {
        (void)finish_inflight(s);
    }
    if (s->key_valid) {
        if (s->key_owned) {
            nnrt_swap_crypto_destroy(s->key_id);
        } else {
            nnrt_swap_crypto_release(s->key_id);
        }
    }
    memset(s, 0, sizeof(*s));
    s->inflight = -1;
}
