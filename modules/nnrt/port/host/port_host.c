/*
 * nnrt port for a hosted C library (Linux, tests): stdio files and console; the
 * counter is CLOCK_MONOTONIC in nanoseconds (wall time: for instruction counts on the
 * host use valgrind --tool=callgrind).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nnrt/port.h"

nnrt_status_t nnrt_port_read_file(const char *path, void *buf, size_t bytes,
                                  size_t *file_bytes)
{
    FILE *f;
    long len;
    nnrt_status_t status = NNRT_OK;

    if (path == NULL || (buf == NULL && bytes != 0)) {
        return NNRT_ERR_ARG;
    }
    f = fopen(path, "rb");
    if (f == NULL) {
        return NNRT_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NNRT_ERR_IO;
    }
    if (file_bytes != NULL) {
        *file_bytes = (size_t)len;
    }
    if ((unsigned long)len != (unsigned long)bytes) {
        status = NNRT_ERR_FORMAT;
    } else if (bytes != 0 && fread(buf, 1, bytes, f) != bytes) {
        status = NNRT_ERR_IO;
    }
    if (fclose(f) != 0 && status == NNRT_OK) {
        status = NNRT_ERR_IO;
    }
    return status;
}

nnrt_status_t nnrt_port_read_file_at(const char *path, size_t offset, void *buf,
                                     size_t bytes, size_t file_size, size_t *file_bytes)
{
    FILE *f;
    long len;
    nnrt_status_t status = NNRT_OK;

    if (path == NULL || (buf == NULL && bytes != 0) || offset > file_size
        || bytes > file_size - offset || file_size > (size_t)LONG_MAX) {
        return NNRT_ERR_ARG;
    }
    f = fopen(path, "rb");
    if (f == NULL) {
        return NNRT_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0) {
        fclose(f);
        return NNRT_ERR_IO;
    }
    if (file_bytes != NULL) {
        *file_bytes = (size_t)len;
    }
    if ((unsigned long)len != (unsigned long)file_size) {
        status = NNRT_ERR_FORMAT;
    } else if (fseek(f, (long)offset, SEEK_SET) != 0
               || (bytes != 0 && fread(buf, 1, bytes, f) != bytes)) {
        status = NNRT_ERR_IO;
    }
    if (fclose(f) != 0 && status == NNRT_OK) {
        status = NNRT_ERR_IO;
    }
    return status;
}

nnrt_status_t nnrt_port_write_file(const char *path, const void *data, size_t bytes,
                                   int append)
{
    FILE *f;
    nnrt_status_t status = NNRT_OK;

    if (path == NULL || (data == NULL && bytes != 0)) {
        return NNRT_ERR_ARG;
    }
    f = fopen(path, append ? "ab" : "wb");
    if (f == NULL) {
        return NNRT_ERR_IO;
    }
    if (bytes != 0 && fwrite(data, 1, bytes, f) != bytes) {
        status = NNRT_ERR_IO;
    }
    if (fclose(f) != 0) {
        status = NNRT_ERR_IO;
    }
    return status;
}

void nnrt_port_log(const char *line)
{
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

void nnrt_port_log_error(const char *line)
{
    fflush(stdout);
    fputs(line, stderr);
    fputc('\n', stderr);
    fflush(stderr);
}

uint64_t nnrt_port_counter(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *nnrt_port_counter_unit(void)
{
    return "ns";
}

size_t nnrt_port_stack_used(void)
{
    return 0;
}

void nnrt_port_exit(int code)
{
    fflush(stdout);
    fflush(stderr);
    exit(code);
}
