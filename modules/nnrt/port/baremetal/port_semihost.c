/*
 * The file and console half of the bare-metal port: everything goes through Arm
 * semihosting, which QEMU serves from the host (paths are host paths; relative ones
 * resolve against QEMU's working directory).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/port.h"
#include "semihost.h"

static int32_t sh_open(const char *path, uint32_t mode)
{
    uintptr_t block[3];

    block[0] = (uintptr_t)path;
    block[1] = mode;
    block[2] = strlen(path);
    return nnrt_semihost(NNRT_SH_SYS_OPEN, (uintptr_t)block);
}

static void sh_close(int32_t handle)
{
    uintptr_t block[1];

    block[0] = (uintptr_t)handle;
    (void)nnrt_semihost(NNRT_SH_SYS_CLOSE, (uintptr_t)block);
}

/* SYS_WRITE or SYS_READ (`op`) of exactly `bytes` at `data`, over as many calls as the
 * host needs: returns 0 on success, -1 on an error or a call that moves nothing (a read
 * at end of file before `bytes`). */
static int sh_transfer_all(uint32_t op, int32_t handle, uintptr_t data, size_t bytes)
{
    while (bytes > 0) {
        uintptr_t block[3];
        int32_t left;
        size_t done;

        block[0] = (uintptr_t)handle;
        block[1] = data;
        block[2] = bytes;
        left = nnrt_semihost(op, (uintptr_t)block);
        if (left < 0 || (size_t)left > bytes) {
            return -1;
        }
        done = bytes - (size_t)left;
        if (done == 0) {
            return -1;
        }
        data += done;
        bytes -= done;
    }
    return 0;
}

/* Writes everything or fails: returns 0 on success. */
static int sh_write_all(int32_t handle, const uint8_t *data, size_t bytes)
{
    return sh_transfer_all(NNRT_SH_SYS_WRITE, handle, (uintptr_t)data, bytes);
}

/* Reads exactly `bytes` or fails: returns 0 on success. */
static int sh_read_all(int32_t handle, uint8_t *buf, size_t bytes)
{
    return sh_transfer_all(NNRT_SH_SYS_READ, handle, (uintptr_t)buf, bytes);
}

nnrt_status_t nnrt_port_read_file_at(const char *path, size_t offset, void *buf,
                                     size_t bytes, size_t file_size, size_t *file_bytes)
{
    int32_t handle;
    int32_t len;
    uintptr_t block[2];
    nnrt_status_t status = NNRT_OK;

    if (path == NULL || (buf == NULL && bytes != 0) || offset > file_size
        || bytes > file_size - offset || file_size > (size_t)INT32_MAX) {
        return NNRT_ERR_ARG;
    }
    handle = sh_open(path, NNRT_SH_MODE_RB);
    if (handle < 0) {
        return NNRT_ERR_IO;
    }
    block[0] = (uintptr_t)handle;
    len = nnrt_semihost(NNRT_SH_SYS_FLEN, (uintptr_t)block);
    if (len < 0) {
        status = NNRT_ERR_IO;
    } else {
        if (file_bytes != NULL) {
            *file_bytes = (size_t)len;
        }
        block[1] = (uintptr_t)offset;
        if ((size_t)len != file_size) {
            status = NNRT_ERR_FORMAT;
        } else if (nnrt_semihost(NNRT_SH_SYS_SEEK, (uintptr_t)block) != 0
                   || sh_read_all(handle, (uint8_t *)buf, bytes) != 0) {
            status = NNRT_ERR_IO;
        }
    }
    sh_close(handle);
    return status;
}

nnrt_status_t nnrt_port_read_file(const char *path, void *buf, size_t bytes,
                                  size_t *file_bytes)
{
    /* The whole file: a read at offset 0 of a file that must be exactly bytes long. */
    return nnrt_port_read_file_at(path, 0u, buf, bytes, bytes, file_bytes);
}

nnrt_status_t nnrt_port_write_file(const char *path, const void *data, size_t bytes,
                                   int append)
{
    int32_t handle;
    nnrt_status_t status = NNRT_OK;

    if (path == NULL || (data == NULL && bytes != 0)) {
        return NNRT_ERR_ARG;
    }
    handle = sh_open(path, append ? NNRT_SH_MODE_AB : NNRT_SH_MODE_WB);
    if (handle < 0) {
        return NNRT_ERR_IO;
    }
    if (append) {
        /* QEMU 7.2 opens "ab" without O_APPEND: position at the end explicitly. */
        uintptr_t block[2];
        int32_t len;

        block[0] = (uintptr_t)handle;
        len = nnrt_semihost(NNRT_SH_SYS_FLEN, (uintptr_t)block);
        block[1] = (uintptr_t)len;
        if (len < 0 || nnrt_semihost(NNRT_SH_SYS_SEEK, (uintptr_t)block) != 0) {
            sh_close(handle);
            return NNRT_ERR_IO;
        }
    }
    if (sh_write_all(handle, (const uint8_t *)data, bytes) != 0) {
        status = NNRT_ERR_IO;
    }
    sh_close(handle);
    return status;
}

/* Console handles: ":tt" opened for writing is stdout, for appending is stderr. */
static int32_t console_handle(int error)
{
    static int32_t handles[2] = {-2, -2};
    int32_t *h = &handles[error ? 1 : 0];

    if (*h == -2) {
        *h = sh_open(":tt", error ? NNRT_SH_MODE_A : NNRT_SH_MODE_W);
    }
    return *h;
}

static void console_line(int error, const char *line)
{
    int32_t handle = console_handle(error);

    if (handle >= 0) {
        if (sh_write_all(handle, (const uint8_t *)line, strlen(line)) == 0) {
            (void)sh_write_all(handle, (const uint8_t *)"\n", 1);
        }
    } else {
        nnrt_semihost_write0(line);
        nnrt_semihost_write0("\n");
    }
}

void nnrt_semihost_write0(const char *text)
{
    (void)nnrt_semihost(NNRT_SH_SYS_WRITE0, (uintptr_t)text);
}

void nnrt_port_log(const char *line)
{
    console_line(0, line);
}

void nnrt_port_log_error(const char *line)
{
    console_line(1, line);
}
