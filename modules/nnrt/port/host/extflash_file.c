/*
 * External flash on the host: the blob is a regular file, read with stdio.
 *
 * read_start() performs the whole read at once and read_wait() reports its result,
 * so the host runs the swap driver's exact call sequence (start k+1, decrypt and
 * compute k, wait k+1) without modelling time; on the host, count instructions
 * with callgrind. A short read (the file shrank, or the range runs past its end) is
 * NNRT_ERR_IO at read_wait(), never partial data.
 */
#include <stdio.h>
#include <string.h>

#include "nnrt/extflash.h"

typedef struct {
    FILE *file;
    int pending;             /* a read was started and not yet waited for */
    nnrt_status_t result;    /* its outcome */
    size_t pending_len;
    nnrt_extflash_stats_t stats;
} file_dev_t;

static file_dev_t g_file;
static nnrt_extflash_t g_dev;

static nnrt_status_t file_read_start(nnrt_extflash_t *dev, uint32_t offset, size_t len,
                                     void *dst)
{
    file_dev_t *f = (file_dev_t *)dev->impl;

    if (f == NULL || f->file == NULL || f->pending || (dst == NULL && len != 0)) {
        return NNRT_ERR_ARG;
    }
    if ((uint64_t)offset + (uint64_t)len > (uint64_t)dev->size) {
        return NNRT_ERR_ARG;
    }
    f->pending = 1;
    f->pending_len = len;
    f->result = NNRT_OK;
    if (fseek(f->file, (long)offset, SEEK_SET) != 0) {
        f->result = NNRT_ERR_IO;
    } else if (len != 0 && fread(dst, 1, len, f->file) != len) {
        f->result = NNRT_ERR_IO;
    }
    return NNRT_OK;
}

static nnrt_status_t file_read_wait(nnrt_extflash_t *dev)
{
    file_dev_t *f = (file_dev_t *)dev->impl;

    if (f == NULL || !f->pending) {
        return NNRT_ERR_ARG;
    }
    f->pending = 0;
    if (f->result == NNRT_OK) {
        f->stats.reads++;
        f->stats.bytes += f->pending_len;
    }
    return f->result;
}

nnrt_status_t nnrt_extflash_port_open(const char *path, nnrt_extflash_t **dev)
{
    long len;

    if (path == NULL || dev == NULL) {
        return NNRT_ERR_ARG;
    }
    nnrt_extflash_port_close();
    g_file.file = fopen(path, "rb");
    if (g_file.file == NULL) {
        return NNRT_ERR_IO;
    }
    if (fseek(g_file.file, 0, SEEK_END) != 0 || (len = ftell(g_file.file)) < 0) {
        nnrt_extflash_port_close();
        return NNRT_ERR_IO;
    }
    if ((unsigned long)len > 0xFFFFFFFFul) {
        nnrt_extflash_port_close();
        return NNRT_ERR_FORMAT;
    }
    g_dev.read_start = file_read_start;
    g_dev.read_wait = file_read_wait;
    g_dev.size = (uint32_t)len;
    g_dev.impl = &g_file;
    *dev = &g_dev;
    return NNRT_OK;
}

void nnrt_extflash_port_close(void)
{
    if (g_file.file != NULL) {
        (void)fclose(g_file.file);
    }
    memset(&g_file, 0, sizeof(g_file));
    memset(&g_dev, 0, sizeof(g_dev));
}

nnrt_extflash_stats_t nnrt_extflash_port_stats(void)
{
    return g_file.stats;
}
