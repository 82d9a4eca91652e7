/*
 * A feature-map tile device over a file (nnrt/fmstore.h), through the port's file calls
 * (nnrt/port.h): a host file, or on bare-metal QEMU the semihosting file, as the weight
 * blob (port/baremetal/port_semihost.c). The tile store writes its ring sequentially,
 * so a write either continues the file (append) or starts it again at offset 0
 * (truncate): the file is a log, like an erase-before-write medium's ring.
 */
#include <string.h>

#include "nnrt/fmstore.h"
#include "nnrt/port.h"

static nnrt_status_t file_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
                                size_t len)
{
    nnrt_tiledev_file_t *f = (nnrt_tiledev_file_t *)dev->impl;
    nnrt_status_t st;

    if (f == NULL || src == NULL || (uint64_t)offset + len > dev->size) {
        return NNRT_ERR_ARG;
    }
    if (offset != 0u && offset != f->length) {
        return NNRT_ERR_ARG; /* not sequential: the store's ring never does this */
    }
    st = nnrt_port_write_file(f->path, src, len, offset != 0u);
    if (st != NNRT_OK) {
        return st;
    }
    f->length = offset + (uint32_t)len;
    f->writes++;
    return NNRT_OK;
}

static nnrt_status_t file_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
    nnrt_tiledev_file_t *f = (nnrt_tiledev_file_t *)dev->impl;
    nnrt_status_t st;

    if (f == NULL || dst == NULL || (uint64_t)offset + len > f->length) {
        return NNRT_ERR_IO; /* beyond what was written: a short read */
    }
    st = nnrt_port_read_file_at(f->path, offset, dst, len, f->length, NULL);
    if (st == NNRT_OK) {
        f->reads++;
    }
    return st == NNRT_ERR_FORMAT ? NNRT_ERR_IO : st; /* the file changed length under us */
}

nnrt_status_t nnrt_tiledev_file_init(nnrt_tiledev_t *dev, nnrt_tiledev_file_t *f,
                                     const char *path, uint32_t size)
{
    if (dev == NULL || f == NULL || path == NULL || size == 0u) {
        return NNRT_ERR_ARG;
    }
    memset(f, 0, sizeof(*f));
    f->path = path;
    dev->write = file_write;
    dev->read = file_read;
    dev->prefetch = NULL; /* reads complete at once: nothing to read ahead */
    dev->size = size;
    dev->unit = 1u; /* a file takes any length at its end */
    dev->impl = f;
    return NNRT_OK;
}
