/**
 * @file alloc.h
 * @brief The defragmenting dynamic allocator (Liberis & Lane 2019): an arena of
 *        relocatable blocks named by handles, compacted between operators.
 *
 * Model:
 * - The arena holds one contiguous *live block*: the allocated blocks in address order,
 *   each starting at a multiple of NNRT_ARENA_ALIGN and occupying its size rounded up
 *   to it. `top` is the end of the live block.
 * - nnrt_dyn_alloc() puts a new block at `top` (the end of the live block). If the end
 *   has no room but the gaps left by frees would make room, it compacts first.
 * - nnrt_dyn_free() releases a block; it leaves a gap until the next compaction (or
 *   lowers `top` when it was the last block).
 * - nnrt_dyn_compact() moves every live block down, in address order, so that the
 *   live block starts at 0 and has no gaps; handles are updated. After it the arena
 *   use is exactly the sum of the (aligned) live sizes: no fragmentation.
 *
 * Pointers: nnrt_dyn_ptr() gives a block's current address. Any alloc or compact may
 * move blocks, so **no pointer obtained from a handle may be kept across an alloc or a
 * compact**: generated code and the model loader fetch pointers at the start of each
 * operator and compact only between operators.
 *
 * Memory: no heap. The caller provides the arena and two tables of `n_handles`
 * entries (the handle table and the address-order list, NNRT_DYN_TABLE_BYTES(n)
 * bytes in total). Costs: alloc O(1) (O(live) when it must compact), free O(live),
 * compact O(live) plus the bytes moved, ptr O(1).
 *
 * Counters: `high_water` is the largest `top` ever reached (bytes of the arena an
 * inference needed), `bytes_moved` the data bytes copied by compactions (a block is
 * moved by its requested size, not its padding).
 */
#ifndef NNRT_ALLOC_H_
#define NNRT_ALLOC_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A handle: an index into the allocator's handle table, 0..n_handles-1. */
typedef uint16_t nnrt_dyn_handle_t;

/** `offset` of a handle that holds no block. */
#define NNRT_DYN_FREE 0xFFFFFFFFu

/** Largest number of handles an allocator can have. */
#define NNRT_DYN_MAX_HANDLES 0xFFFFu

/**
 * Tensor index of the allocator statistics record in a trace (NNRT_TRACE builds of a
 * model generated with `--allocator dynamic`): five uint32 after the last operator,
 * high_water, capacity, bytes_moved (low, high word), compactions.
 */
#define NNRT_DYN_TRACE_STATS 0xFFFFFFFFu

/** One handle's record. */
typedef struct {
    uint32_t offset; /**< byte offset of the block in the arena, or NNRT_DYN_FREE */
    uint32_t size;   /**< requested bytes (the block occupies it rounded up) */
} nnrt_dyn_block_t;

/** Bytes of caller memory the tables of an allocator with @p n handles need. */
#define NNRT_DYN_TABLE_BYTES(n) \
    ((size_t)(n) * (sizeof(nnrt_dyn_block_t) + sizeof(nnrt_dyn_handle_t)))

/** The allocator's state. Read the counters directly; change it only through the API. */
typedef struct {
    uint8_t *arena;             /**< NNRT_ARENA_ALIGN-aligned arena */
    uint32_t capacity;          /**< usable bytes (arena bytes rounded down to the alignment) */
    nnrt_dyn_block_t *blocks;   /**< [n_handles] handle table */
    nnrt_dyn_handle_t *order;   /**< [n_handles]: live handles in address order, n_live used */
    uint32_t n_handles;         /**< handles 0..n_handles-1 */
    uint32_t n_live;            /**< blocks currently allocated */
    uint32_t top;               /**< end of the live block (a multiple of the alignment) */
    uint32_t live_bytes;        /**< sum of the aligned sizes of live blocks (<= top) */
    uint32_t high_water;        /**< largest `top` since init or nnrt_dyn_reset_stats() */
    uint32_t compactions;       /**< compactions that moved at least one block */
    uint64_t bytes_moved;       /**< bytes copied by compactions */
} nnrt_dyn_t;

/**
 * Set up an allocator over @p arena with every handle free and the counters at 0.
 *
 * @param d          the allocator
 * @param arena      the arena, aligned to NNRT_ARENA_ALIGN
 * @param bytes      arena size; only a multiple of NNRT_ARENA_ALIGN is used, < 4 GiB
 * @param blocks     handle table, @p n_handles entries (caller memory)
 * @param order      address-order list, @p n_handles entries (caller memory)
 * @param n_handles  number of handles, 0..NNRT_DYN_MAX_HANDLES
 * @return NNRT_OK; NNRT_ERR_ARG for NULL pointers (with n_handles > 0 or bytes > 0),
 *         a misaligned arena or too many handles.
 */
nnrt_status_t nnrt_dyn_init(nnrt_dyn_t *d, void *arena, size_t bytes, nnrt_dyn_block_t *blocks,
                            nnrt_dyn_handle_t *order, uint32_t n_handles);

/** Free every block (the arena is then empty); keeps the counters. O(handles). */
void nnrt_dyn_reset(nnrt_dyn_t *d);

/** Zero the counters; `high_water` restarts from the current `top`. */
void nnrt_dyn_reset_stats(nnrt_dyn_t *d);

/**
 * Allocate @p size bytes for handle @p h at the end of the live block.
 *
 * May compact (moving other blocks) when only the gaps would make room.
 * The new block's contents are undefined.
 *
 * @return NNRT_OK; NNRT_ERR_ARG if @p h is out of range or already holds a block;
 *         NNRT_ERR_NOMEM if the live sizes plus this one exceed the capacity
 *         (nothing is changed then).
 */
nnrt_status_t nnrt_dyn_alloc(nnrt_dyn_t *d, nnrt_dyn_handle_t h, uint32_t size);

/**
 * Free handle @p h's block. Its bytes become a gap until the next compaction.
 * @return NNRT_OK; NNRT_ERR_ARG if @p h is out of range or holds no block.
 */
nnrt_status_t nnrt_dyn_free(nnrt_dyn_t *d, nnrt_dyn_handle_t h);

/**
 * Close every gap: move live blocks down in address order (memmove), update their
 * handles; afterwards `top` equals `live_bytes`.
 * @return the bytes moved by this call.
 */
uint32_t nnrt_dyn_compact(nnrt_dyn_t *d);

/**
 * Current address of handle @p h's block, or NULL if @p h is out of range or free.
 * Valid until the next alloc or compact.
 */
static inline void *nnrt_dyn_ptr(const nnrt_dyn_t *d, nnrt_dyn_handle_t h)
{
    if ((uint32_t)h >= d->n_handles || d->blocks[h].offset == NNRT_DYN_FREE) {
        return NULL;
    }
    return d->arena + d->blocks[h].offset;
}

#ifdef __cplusplus
}
#endif

#endif /* NNRT_ALLOC_H_ */
