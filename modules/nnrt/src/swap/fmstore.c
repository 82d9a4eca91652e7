/*
 * Feature-map tiles out of core (nnrt/fmstore.h): seal, write, read back, open.
 * The AEAD is the swap driver's PSA backend (swap_psa.c); nothing cryptographic here.
 */
#include <string.h>

#include "nnrt/fmstore.h"
#include "swap_crypto.h"

#define FM_AAD_BYTES 16u

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void nonce_aad(const nnrt_fmstore_t *s, uint32_t tile, size_t len,
                      uint8_t nonce[NNRT_SWAP_NONCE_BYTES], uint8_t aad[FM_AAD_BYTES])
{
    memcpy(nonce, s->salt, 4);
    put32(nonce + 4, s->inference);
    put32(nonce + 8, tile);
    memcpy(aad, "NNFM", 4);
    put32(aad + 4, tile);
    put32(aad + 8, (uint32_t)len);
    put32(aad + 12, s->inference);
}

nnrt_status_t nnrt_fmstore_open(nnrt_fmstore_t *s, const nnrt_fmstore_config_t *cfg)
{
    nnrt_status_t st;

    if (s == NULL || cfg == NULL || cfg->dev == NULL || cfg->dev->write == NULL
        || cfg->dev->read == NULL || cfg->offsets == NULL || cfg->lengths == NULL
        || cfg->n_tiles == 0u || cfg->dev->size == 0u) {
        return NNRT_ERR_ARG;
    }
    memset(s, 0, sizeof(*s));
    st = nnrt_swap_crypto_init();
    if (st != NNRT_OK) {
        return st;
    }
    st = nnrt_swap_crypto_import_rw(cfg->algorithm, cfg->key, cfg->key_len, &s->key_id);
    if (st != NNRT_OK) {
        return st;
    }
    s->dev = cfg->dev;
    s->algorithm = cfg->algorithm;
    memcpy(s->salt, cfg->salt, sizeof(s->salt));
    s->offsets = cfg->offsets;
    s->lengths = cfg->lengths;
    s->n_tiles = cfg->n_tiles;
    for (uint32_t i = 0; i < s->n_tiles; i++) {
        s->offsets[i] = UINT32_MAX; /* never written */
        s->lengths[i] = 0u;
    }
    for (uint32_t i = 0; i < NNRT_FMSTORE_NEXT_SLOTS; i++) {
        s->next_from[i] = UINT32_MAX;
        s->next_tile[i] = UINT32_MAX;
    }
    s->last_get = UINT32_MAX;
    return NNRT_OK;
}

/* Read-ahead hint after reading `tile`: learn that it followed the previous read, then
 * name the tile expected next (the one that followed `tile` last time, else tile + 1) if
 * it has a place on the device. */
static void hint_next(nnrt_fmstore_t *s, uint32_t tile)
{
    const uint32_t mask = NNRT_FMSTORE_NEXT_SLOTS - 1u;
    uint32_t next = tile + 1u;

    if (s->last_get != UINT32_MAX) {
        s->next_from[s->last_get & mask] = s->last_get;
        s->next_tile[s->last_get & mask] = tile;
    }
    s->last_get = tile;
    if (s->next_from[tile & mask] == tile) {
        next = s->next_tile[tile & mask];
    }
    if (next < s->n_tiles && s->offsets[next] != UINT32_MAX) {
        s->dev->prefetch(s->dev, s->offsets[next],
                         (size_t)s->lengths[next] + NNRT_SWAP_TAG_BYTES);
    }
}

nnrt_status_t nnrt_fmstore_begin(nnrt_fmstore_t *s)
{
    if (s == NULL || s->dev == NULL) {
        return NNRT_ERR_ARG;
    }
    if (s->inference == UINT32_MAX) {
        return NNRT_ERR_ARG; /* the counter would wrap: nonces would repeat; re-key */
    }
    s->inference++;
    s->error = NNRT_OK;
    s->pending = 0u;
    return NNRT_OK;
}

nnrt_status_t nnrt_fmstore_start(nnrt_fmstore_t *s)
{
    if (s != NULL && s->pending) {
        s->pending = 0u; /* the input writer began this inference */
        return s->dev != NULL ? NNRT_OK : NNRT_ERR_ARG;
    }
    return nnrt_fmstore_begin(s);
}

nnrt_status_t nnrt_fmstore_input_write(nnrt_fmstore_t *s, nnrt_fm_input_t *in,
                                       const void *data, size_t len)
{
    const uint8_t *src = (const uint8_t *)data;
    nnrt_status_t st;

    if (s == NULL || in == NULL || in->buf == NULL || in->chunk_bytes == 0u
        || (data == NULL && len != 0u) || len > (size_t)(in->total_bytes - in->written)) {
        return NNRT_ERR_ARG;
    }
    if (!s->pending) {
        st = nnrt_fmstore_begin(s); /* the input's tiles belong to the next inference */
        if (st != NNRT_OK) {
            return st;
        }
        s->pending = 1u;
    }
    while (len > 0u) {
        const uint32_t c = in->written / in->chunk_bytes;
        const uint32_t at = in->written - c * in->chunk_bytes;
        const uint32_t clen = c + 1u < in->chunks ? in->chunk_bytes
                                                  : in->total_bytes - c * in->chunk_bytes;
        const uint32_t k = (size_t)(clen - at) < len ? clen - at : (uint32_t)len;

        memcpy(in->buf + at, src, k);
        in->written += k;
        src += k;
        len -= k;
        if (at + k == clen) {
            st = nnrt_fmstore_put(s, in->first_tile + c, in->buf, clen);
            if (st != NNRT_OK) {
                return st;
            }
        }
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_fmstore_input_done(nnrt_fmstore_t *s, nnrt_fm_input_t *in)
{
    const int whole = in != NULL && in->written == in->total_bytes;

    if (s == NULL || in == NULL) {
        return NNRT_ERR_ARG;
    }
    in->written = 0u;
    return whole ? NNRT_OK : NNRT_ERR_ARG;
}

nnrt_status_t nnrt_fmstore_put(nnrt_fmstore_t *s, uint32_t tile, uint8_t *buf, size_t len)
{
    uint8_t nonce[NNRT_SWAP_NONCE_BYTES];
    uint8_t aad[FM_AAD_BYTES];
    uint32_t sealed, unit, span, off;
    nnrt_status_t st;

    if (s == NULL || s->dev == NULL || buf == NULL || len == 0u || tile >= s->n_tiles) {
        return NNRT_ERR_ARG;
    }
    if (s->error != NNRT_OK) {
        return s->error;
    }
    if (s->inference == 0u) {
        return NNRT_ERR_ARG; /* begin() first */
    }
    sealed = (uint32_t)len + NNRT_SWAP_TAG_BYTES;
    unit = s->dev->unit ? s->dev->unit : 1u;
    span = (sealed + unit - 1u) / unit * unit;
    if (span > s->dev->size) {
        return NNRT_ERR_ARG;
    }
    /* wear-aware placement: the next free span of the ring */
    off = s->cursor;
    if (off + span > s->dev->size) {
        off = 0u;
    }
    nonce_aad(s, tile, len, nonce, aad);
    st = nnrt_swap_crypto_seal(s->key_id, s->algorithm, nonce, aad, sizeof(aad), buf, len);
    if (st == NNRT_OK) {
        st = s->dev->write(s->dev, off, buf, sealed);
    }
    if (st != NNRT_OK) {
        s->error = st;
        return st;
    }
    s->offsets[tile] = off;
    s->lengths[tile] = (uint32_t)len;
    s->cursor = off + span;
    s->bytes_written += sealed;
    return NNRT_OK;
}

nnrt_status_t nnrt_fmstore_get(nnrt_fmstore_t *s, uint32_t tile, uint8_t *buf, size_t len)
{
    uint8_t nonce[NNRT_SWAP_NONCE_BYTES];
    uint8_t aad[FM_AAD_BYTES];
    size_t plain = 0;
    nnrt_status_t st;

    if (s == NULL || s->dev == NULL || buf == NULL || len == 0u || tile >= s->n_tiles) {
        return NNRT_ERR_ARG;
    }
    if (s->error != NNRT_OK) {
        return s->error;
    }
    if (s->offsets[tile] == UINT32_MAX || s->lengths[tile] != (uint32_t)len) {
        s->error = NNRT_ERR_FORMAT; /* never written, or written with another length */
        memset(buf, 0, len + NNRT_SWAP_TAG_BYTES);
        return s->error;
    }
    st = s->dev->read(s->dev, s->offsets[tile], buf, len + NNRT_SWAP_TAG_BYTES);
    if (st == NNRT_OK && s->dev->prefetch != NULL) {
        /* the tile expected next, read ahead while this one is opened and computed on;
         * only a hint: its bytes are opened and authenticated when get() asks for them,
         * like any other read */
        hint_next(s, tile);
    }
    if (st == NNRT_OK) {
        nonce_aad(s, tile, len, nonce, aad);
        st = nnrt_swap_crypto_open(s->key_id, s->algorithm, nonce, aad, sizeof(aad), buf,
                                   len + NNRT_SWAP_TAG_BYTES, &plain);
    }
    if (st != NNRT_OK) {
        memset(buf, 0, len + NNRT_SWAP_TAG_BYTES); /* no unauthenticated byte survives */
        s->error = st;
        return st;
    }
    s->bytes_read += len + NNRT_SWAP_TAG_BYTES;
    return NNRT_OK;
}

void nnrt_fmstore_close(nnrt_fmstore_t *s)
{
    if (s != NULL && s->dev != NULL) {
        nnrt_swap_crypto_destroy(s->key_id);
        memset(s, 0, sizeof(*s));
    }
}
