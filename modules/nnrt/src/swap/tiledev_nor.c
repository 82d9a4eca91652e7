/*
 * A feature-map tile device over a NOR-like medium (nnrt/fmstore.h): erase before write.
 * The tile store writes its ring sequentially (or restarts it at 0), so every erase
 * block is erased exactly when a write first enters it on a pass of the ring: a write
 * to [offset, offset + len) erases each block whose start lies in that range, and the
 * block holding `offset` when the write starts inside it was erased by the write that
 * entered it. Each block is thus erased once per pass: wear spreads evenly.
 */
#include "nnrt/fmstore.h"

static nnrt_status_t nor_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
                               size_t len)
{
    nnrt_tiledev_nor_t *nor = (nnrt_tiledev_nor_t *)dev->impl;
    uint32_t eb, first, end;
    nnrt_status_t st;

    if (nor == NULL || src == NULL || len == 0u || (uint64_t)offset + len > nor->size) {
        return NNRT_ERR_ARG;
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
    return nor->program(nor->ctx, offset, src, len);
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
        || nor->size < nor->erase_block || nor->size % nor->erase_block != 0u) {
        return NNRT_ERR_ARG;
    }
    nor->erases = 0u;
    dev->write = nor_write;
    dev->read = nor_read;
    dev->size = nor->size;
    dev->unit = 1u;
    dev->impl = nor;
    return NNRT_OK;
}
