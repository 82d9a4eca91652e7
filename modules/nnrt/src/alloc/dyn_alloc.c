/*
 * The defragmenting dynamic allocator (see nnrt/alloc.h for the model).
 *
 * State: the handle table (offset, size per handle) and `order`, the live handles
 * sorted by address. New blocks go at `top`, so appending to `order` keeps it sorted;
 * compaction walks `order` once. No heap, no recursion.
 */
#include "nnrt/alloc.h"

#include <string.h>

#define ALIGN_MASK ((uint32_t)NNRT_ARENA_ALIGN - 1u)

/* Size rounded up to the alignment; the caller has checked size <= capacity. */
static uint32_t aligned(uint32_t size)
{
    return (size + ALIGN_MASK) & ~ALIGN_MASK;
}

nnrt_status_t nnrt_dyn_init(nnrt_dyn_t *d, void *arena, size_t bytes, nnrt_dyn_block_t *blocks,
                            nnrt_dyn_handle_t *order, uint32_t n_handles)
{
    uint32_t i;

    if (d == NULL || n_handles > NNRT_DYN_MAX_HANDLES) {
        return NNRT_ERR_ARG;
    }
    if ((arena == NULL && bytes > 0u) ||
        (n_handles > 0u && (blocks == NULL || order == NULL)) ||
        ((uintptr_t)arena & (uintptr_t)ALIGN_MASK) != 0u) {
        return NNRT_ERR_ARG;
    }
    if (bytes > (size_t)0xFFFFFFF0u) {
        bytes = (size_t)0xFFFFFFF0u;
    }
    d->arena = (uint8_t *)arena;
    d->capacity = (uint32_t)bytes & ~ALIGN_MASK;
    d->blocks = blocks;
    d->order = order;
    d->n_handles = n_handles;
    for (i = 0; i < n_handles; i++) {
        blocks[i].offset = NNRT_DYN_FREE;
        blocks[i].size = 0u;
    }
    d->n_live = 0u;
    d->top = 0u;
    d->live_bytes = 0u;
    nnrt_dyn_reset_stats(d);
    return NNRT_OK;
}

void nnrt_dyn_reset(nnrt_dyn_t *d)
{
    uint32_t i;

    for (i = 0; i < d->n_live; i++) {
        d->blocks[d->order[i]].offset = NNRT_DYN_FREE;
        d->blocks[d->order[i]].size = 0u;
    }
    d->n_live = 0u;
    d->top = 0u;
    d->live_bytes = 0u;
}

void nnrt_dyn_reset_stats(nnrt_dyn_t *d)
{
    d->high_water = d->top;
    d->compactions = 0u;
    d->bytes_moved = 0u;
}

uint32_t nnrt_dyn_compact(nnrt_dyn_t *d)
{
    uint32_t cursor = 0u;
    uint32_t moved = 0u;
    uint32_t i;

    for (i = 0; i < d->n_live; i++) {
        nnrt_dyn_block_t *b = &d->blocks[d->order[i]];

        if (b->offset != cursor) {
            /* cursor < b->offset: blocks only move down, in address order, so a move
             * never overwrites a block that has not moved yet. */
            memmove(d->arena + cursor, d->arena + b->offset, b->size);
            moved += b->size;
            b->offset = cursor;
        }
        cursor += aligned(b->size);
    }
    d->top = cursor;
    if (moved > 0u) {
        d->compactions++;
        d->bytes_moved += moved;
    }
    return moved;
}

nnrt_status_t nnrt_dyn_alloc(nnrt_dyn_t *d, nnrt_dyn_handle_t h, uint32_t size)
{
    uint32_t need;

    if ((uint32_t)h >= d->n_handles || d->blocks[h].offset != NNRT_DYN_FREE) {
        return NNRT_ERR_ARG;
    }
    if (size > d->capacity) {
        return NNRT_ERR_NOMEM;
    }
    need = aligned(size);
    if (need > d->capacity - d->live_bytes) {
        return NNRT_ERR_NOMEM;
    }
    if (need > d->capacity - d->top) {
        (void)nnrt_dyn_compact(d); /* the gaps make room: close them */
    }
    d->blocks[h].offset = d->top;
    d->blocks[h].size = size;
    d->order[d->n_live++] = h;
    d->top += need;
    d->live_bytes += need;
    if (d->top > d->high_water) {
        d->high_water = d->top;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_dyn_free(nnrt_dyn_t *d, nnrt_dyn_handle_t h)
{
    uint32_t i;

    if ((uint32_t)h >= d->n_handles || d->blocks[h].offset == NNRT_DYN_FREE) {
        return NNRT_ERR_ARG;
    }
    /* Find it from the end: blocks allocated last die first more often. */
    i = d->n_live;
    while (i > 0u && d->order[i - 1u] != h) {
        i--;
    }
    if (i == 0u) {
        return NNRT_ERR_INTERNAL; /* a live block missing from the order list */
    }
    i--;
    memmove(&d->order[i], &d->order[i + 1u], (d->n_live - i - 1u) * sizeof(d->order[0]));
    d->n_live--;
    d->live_bytes -= aligned(d->blocks[h].size);
    d->blocks[h].offset = NNRT_DYN_FREE;
    d->blocks[h].size = 0u;
    if (i == d->n_live) { /* it was the last block: the live block ends earlier */
        if (d->n_live == 0u) {
            d->top = 0u;
        } else {
            const nnrt_dyn_block_t *last = &d->blocks[d->order[d->n_live - 1u]];

            d->top = last->offset + aligned(last->size);
        }
    }
    return NNRT_OK;
}
