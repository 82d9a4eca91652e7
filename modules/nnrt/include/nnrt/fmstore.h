/**
 * @file fmstore.h
 * @brief Feature maps out of core: tiles of activations written to external storage
 *        and read back, each sealed with an AEAD (issue 39, the runtime half).
 *
 * When RAM cannot hold a model's feature maps, the generated code evicts some to a
 * storage device and reads them back before they are used (plan:
 * scripts/nnopt/swap/fmap.py). Every tile is sealed like a weight chunk (nnrt/swap.h:
 * the same PSA AEAD, ChaCha20-Poly1305 or AES-128-GCM, no cryptography here):
 *
 * - nonce (12 bytes) = salt (4 bytes, the caller's: unique per key and power cycle,
 *   e.g. a persisted boot counter) || inference counter (4 bytes, little-endian) ||
 *   tile index (4 bytes, little-endian); each (inference, tile) is written once, so
 *   no nonce repeats under a key;
 * - AAD = "NNFM" || tile index || plaintext length || inference counter (16 bytes).
 *
 * So a tile read back must be the one written for this tile in this inference: a
 * flipped bit, a tile written for another index, or a **stale** tile (written in an
 * earlier inference and replayed, or never rewritten) fails authentication:
 * NNRT_ERR_AUTH, the buffer zeroed, and the store latches the error (every later call
 * returns it until the next nnrt_fmstore_begin()), so the inference stops with that
 * status and never computes on a wrong feature map.
 *
 * Placement (wear-aware): tiles are written at a cursor that advances through the
 * device as a ring (in program units), so writes spread evenly over its erase blocks;
 * the device's write() erases a block before the first write into it (NOR: erase before
 * write) and the table of where each tile went stays in RAM.
 *
 * Buffers: a tile of `len` bytes is sealed and opened in place and needs
 * `len + NNRT_SWAP_TAG_BYTES` bytes at `buf`.
 */
#ifndef NNRT_FMSTORE_H_
#define NNRT_FMSTORE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"
#include "nnrt/swap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnrt_tiledev nnrt_tiledev_t;

/** A writable storage device (port: host file, semihosting file, Zephyr flash_area or
 *  disk_access). To the store, both calls complete the transfer before returning: a
 *  device may write behind (copy @p src and return, the transfer still running) if a
 *  later read of those bytes returns them, and it reports a failed write at a later call
 *  at the latest (Zephyr: CONFIG_NNRT_SWAP_FM_ASYNC). */
struct nnrt_tiledev {
    /** Write len bytes at offset; erases first where the medium needs it. */
    nnrt_status_t (*write)(nnrt_tiledev_t *dev, uint32_t offset, const void *src, size_t len);
    /** Read len bytes at offset into dst. */
    nnrt_status_t (*read)(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len);
    uint32_t size;        /**< bytes of the device the store may use */
    uint32_t unit;        /**< write alignment: program unit / block (1: any) */
    void *impl;
    /** Optional (NULL: none): a hint that [offset, offset + len) is likely read next, so
     *  a device may start reading it ahead into a buffer of its own while the caller
     *  computes. The store calls it after reading a tile, for the place of the tile it
     *  expects next: the one read after this tile in the previous inference, else the
     *  next index (a guess: the bytes may be stale or be rewritten first; the device
     *  must serve a later read() with what the medium holds then, and authentication
     *  still decides). */
    void (*prefetch)(nnrt_tiledev_t *dev, uint32_t offset, size_t len);
};

typedef struct {
    nnrt_tiledev_t *dev;
    const uint8_t *key;   /**< AEAD key bytes (imported ENCRYPT|DECRYPT, destroyed at close) */
    size_t key_len;
    uint32_t algorithm;   /**< NNRT_SWAP_ALG_* */
    uint8_t salt[4];      /**< see the nonce above */
    uint32_t *offsets;    /**< room for n_tiles entries: where each tile went */
    uint32_t *lengths;    /**< room for n_tiles entries */
    uint32_t n_tiles;
} nnrt_fmstore_config_t;

/** Entries of the store's table of which tile was read after which (the read-ahead
 *  hint, nnrt_tiledev_t.prefetch): a power of two. */
#define NNRT_FMSTORE_NEXT_SLOTS 16u

typedef struct {
    nnrt_tiledev_t *dev;
    uint32_t key_id;
    uint32_t algorithm;
    uint8_t salt[4];
    uint32_t inference;   /**< counter: incremented by nnrt_fmstore_begin() */
    uint32_t cursor;      /**< next write offset (ring) */
    uint32_t *offsets;
    uint32_t *lengths;
    uint32_t n_tiles;
    nnrt_status_t error;  /**< latched until the next begin() */
    uint64_t bytes_written;
    uint64_t bytes_read;
    uint8_t pending;      /**< 1: an input writer began the next inference (see below) */
    /** Read-ahead hints: the tile read after tile `from` the last time (the schedule is
     *  static, so the order of reads repeats every inference), direct-mapped by `from`;
     *  UINT32_MAX: none. Only used when the device has a prefetch(). */
    uint32_t next_from[NNRT_FMSTORE_NEXT_SLOTS];
    uint32_t next_tile[NNRT_FMSTORE_NEXT_SLOTS];
    uint32_t last_get;    /**< the tile read last, UINT32_MAX before the first */
} nnrt_fmstore_t;

/**
 * A graph input that lives in storage (plan: `stored` entry with "written_by":
 * "application"): the application writes its bytes in order (row-major, any piece
 * sizes) through nnrt_fmstore_input_write() before invoke(); each time a row chunk is
 * complete it is sealed and written as tile `first_tile + c`, so the input is never
 * whole in RAM (one chunk plus its tag at `buf`). The first write of an inference
 * begins it (nnrt_fmstore_begin(): the input's tiles carry the counter of the
 * inference that reads them); invoke() then runs on that inference
 * (nnrt_fmstore_start()) and checks every byte was written
 * (nnrt_fmstore_input_done()). A tile of an input written for an earlier inference
 * (stale) or altered fails authentication when the first band reads it.
 */
typedef struct {
    uint32_t first_tile;  /**< tile of chunk 0 */
    uint32_t chunks;      /**< row chunks */
    uint32_t chunk_bytes; /**< bytes of every chunk but the last */
    uint32_t total_bytes; /**< bytes of the input */
    uint8_t *buf;         /**< chunk_bytes + NNRT_SWAP_TAG_BYTES of room */
    uint32_t written;     /**< bytes written for the next inference */
} nnrt_fm_input_t;

/** A tile device over a file (src/swap/tiledev_file.c): the port's file calls, so a host
 *  file or, on bare-metal QEMU, the semihosting file. */
typedef struct {
    const char *path;
    uint32_t length;      /**< bytes written so far (the file's length) */
    uint64_t writes;
    uint64_t reads;
} nnrt_tiledev_file_t;

/** Set up @p dev over the file at @p path (truncated by the first write), @p size
 *  bytes of ring. */
nnrt_status_t nnrt_tiledev_file_init(nnrt_tiledev_t *dev, nnrt_tiledev_file_t *f,
                                     const char *path, uint32_t size);

/** A NOR-like medium (erase blocks, programming clears bits only): the calls a port
 *  provides (Zephyr: flash_area_erase / flash_area_write / flash_area_read,
 *  include/zephyr/storage/flash_map.h). */
typedef struct {
    nnrt_status_t (*erase)(void *ctx, uint32_t offset, uint32_t len);
    nnrt_status_t (*program)(void *ctx, uint32_t offset, const void *src, size_t len);
    nnrt_status_t (*read)(void *ctx, uint32_t offset, void *dst, size_t len);
    void *ctx;
    uint32_t size;        /**< bytes of the partition */
    uint32_t erase_block; /**< bytes erased at once (a power of two) */
    /** bytes programmed at once: offsets and lengths of program() are multiples of it
     *  (a power of two, at most NNRT_TILEDEV_NOR_MAX_UNIT; 0 or 1: any). Zephyr:
     *  flash_area_align(), the driver's write-block-size. */
    uint32_t program_unit;
    uint8_t erased;       /**< the erased byte value (pads a tile's last program unit) */
    uint32_t erases;      /**< erase operations so far */
} nnrt_tiledev_nor_t;

/** The largest program unit the NOR device pads a tile's tail to (bytes). */
#define NNRT_TILEDEV_NOR_MAX_UNIT 64u

/** A tile device over a NOR medium (src/swap/tiledev_nor.c): erase before write, each
 *  erase block erased when the store's ring enters it (so once per pass of the ring:
 *  even wear). The device's unit is the program unit, so tiles start on one; a tile
 *  whose sealed length is not a multiple of it is programmed with its last unit padded
 *  with the erased value. NNRT_ERR_ARG for a bad geometry. */
nnrt_status_t nnrt_tiledev_nor_init(nnrt_tiledev_t *dev, nnrt_tiledev_nor_t *nor);

/** Import the key and set up the store; NNRT_ERR_ARG for bad arguments. */
nnrt_status_t nnrt_fmstore_open(nnrt_fmstore_t *s, const nnrt_fmstore_config_t *cfg);
/** Start an inference: the next counter value (tiles of earlier ones become stale). */
nnrt_status_t nnrt_fmstore_begin(nnrt_fmstore_t *s);
/** Seal tile `tile` (len bytes at buf, room for the tag after them) and write it. */
nnrt_status_t nnrt_fmstore_put(nnrt_fmstore_t *s, uint32_t tile, uint8_t *buf, size_t len);
/** Read tile `tile` back into buf (len + tag bytes of room) and authenticate it. */
nnrt_status_t nnrt_fmstore_get(nnrt_fmstore_t *s, uint32_t tile, uint8_t *buf, size_t len);
/** Begin an inference unless an input writer already did (the generated invoke()). */
nnrt_status_t nnrt_fmstore_start(nnrt_fmstore_t *s);
/** Append @p len bytes of a stored input (see nnrt_fm_input_t); NNRT_ERR_ARG past its
 *  end, else the store's status (a chunk's seal or write failing). */
nnrt_status_t nnrt_fmstore_input_write(nnrt_fmstore_t *s, nnrt_fm_input_t *in,
                                       const void *data, size_t len);
/** At invoke(): NNRT_OK when every byte of the input was written for this inference
 *  (and resets the writer for the next one), else NNRT_ERR_ARG (not written: the
 *  inference does not run on a stale input). */
nnrt_status_t nnrt_fmstore_input_done(nnrt_fmstore_t *s, nnrt_fm_input_t *in);
/** Destroy the key. */
void nnrt_fmstore_close(nnrt_fmstore_t *s);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_FMSTORE_H_ */
