/*
 * A feature-map tile device over a NOR-like medium (nnrt/fmstore.h): erase before write.
 * The tile store writes its ring sequentially (or restarts it at 0), so every erase
 * block is erased exactly when a write first enters it on a pass of the ring: a write
 * to [offset, offset + len) erases each block whose start lies in that range, and the
 * block holding `offset` when the write starts inside it was erased by the write that
 * entered it. Each block is thus erased once per pass: wear spreads evenly.
 *
 * Program units (NOR pages, a flash controller's write-block-size): the store starts
 * every tile on a unit (the device's unit), so only a tile's tail can end inside one;
 * it is programmed from a copy padded with the erased value. The padding is never read
 * back as part of a tile, and the next tile starts on the next unit.
 */
#include <string.h>

#include "nnrt/fmstore.h"

static uint32_t unit_of(const nnrt_tiledev_nor_t *nor)
{
    return nor->program_unit > 1u ? nor->program_unit : 1u;
}

/* Program len bytes at offset (a multiple of the unit): the whole units from src, the
 * tail from a copy padded with the erased value. */
static nnrt_status_t program_padded(nnrt_tiledev_nor_t *nor, uint32_t offset,
                                    const uint8_t *src, size_t len)
{
    uint8_t tail[NNRT_TILEDEV_NOR_MAX_UNIT];
    uint32_t unit = unit_of(nor);
    size_t whole = len / unit * unit;
    nnrt_status_t st = NNRT_OK;

    if (offset % unit != 0u) {
        return NNRT_ERR_ARG; /* the store aligns tiles to dev->unit: never happens */
    }
    if (whole > 0u) {
        st = nor->program(nor->ctx, offset, src, whole);
    }
    if (st == NNRT_OK && whole < len) {
        memset(tail, nor->erased, unit);
        memcpy(tail, src + whole, len - whole);
        st = nor->program(nor->ctx, offset + (uint32_t)whole, tail, unit);
    }
    return st;
}

static nnrt_status_t nor_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
                               size_t len)
{
    nnrt_tiledev_nor_t *nor = (nnrt_tiledev_nor_t *)dev->impl;
    uint32_t eb, first, end;
    nnrt_status_t st;

    if (nor == NULL || src == NULL || len == 0u
        || (uint64_t)offset + (len + unit_of(nor) - 1u) / unit_of(nor) * unit_of(nor)
               > nor->size) {
        return NNRT_ERR_ARG; /* the padded tail too must fit */
    }
    eb = nor->erase_block;
    end = offset + (uint32_t)len;
    /* the first block boundary at or after offset (offset itself when aligned) */
    first = (offset + eb - 1u) / eb * eb;
    for (uint32_t b = first; b < end; b += eb) {
        st = nor->erase(nor->ctx, b, eb);
        if (st != NNRT_OK) {
            return st;
        }
        nor->erases++;
    }
    return program_padded(nor, offset, (const uint8_t *)src, len);
}

static nnrt_status_t nor_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
    nnrt_tiledev_nor_t *nor = (nnrt_tiledev_nor_t *)dev->impl;

    if (nor == NULL || dst == NULL || (uint64_t)offset + len > nor->size) {
        return NNRT_ERR_ARG;
    }
    return nor->read(nor->ctx, offset, dst, len);
}

nnrt_status_t nnrt_tiledev_nor_init(nnrt_tiledev_t *dev, nnrt_tiledev_nor_t *nor)
{
    if (dev == NULL || nor == NULL || nor->erase == NULL || nor->program == NULL
        || nor->read == NULL || nor->erase_block == 0u
        || (nor->erase_block & (nor->erase_block - 1u)) != 0u
        || nor->size < nor->erase_block || nor->size % nor->erase_block != 0u
        || nor->program_unit > NNRT_TILEDEV_NOR_MAX_UNIT
        || (nor->program_unit & (nor->program_unit - 1u)) != 0u
        || nor->erase_block % unit_of(nor) != 0u) {
        return NNRT_ERR_ARG;
    }
    nor->erases = 0u;
    dev->write = nor_write;
    dev->read = nor_read;
    dev->prefetch = NULL; /* reads complete at once: nothing to read ahead */
    dev->size = nor->size;
    dev->unit = unit_of(nor);
    dev->impl = nor;
    return NNRT_OK;
}
