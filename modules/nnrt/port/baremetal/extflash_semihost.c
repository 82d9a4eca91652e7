/*
 * External flash under QEMU: the blob is a file on the machine running QEMU, read
 * through Arm semihosting (SYS_OPEN / SYS_SEEK / SYS_READ), with a bandwidth model.
 *
 * Why this stands in faithfully for SPI/QSPI NOR read by DMA:
 * - The bytes are moved by the emulator, not by guest instructions, as a DMA channel
 *   moves them without the CPU: the firmware pays only its driver's own instructions
 *   (building the request, like programming the flash command and the DMA channel).
 *   A memory region copied with memcpy would instead charge the CPU for every byte.
 * - The image is not in the firmware's address space: the only way to its bytes is a
 *   read request through this driver into a staging buffer, as with a NOR chip on
 *   SPI (no memory-mapped mode), and nothing counts against the board's flash or SRAM.
 * - Time: each read costs NNRT_EXTFLASH_SETUP_CYCLES + len * CPU_HZ / BYTES_PER_S CPU
 *   cycles of bus time (defaults: the nucleo_f767zi overlay's SPI NOR, 6.75 MB/s at
 *   216 MHz; the build passes the board's figures). It starts at read_start(); if the
 *   CPU reaches read_wait() earlier, the difference is a stall. Under
 *   `qemu -icount shift=0` the port counter counts instructions, used here as cycles
 *   (1 instruction per cycle assumed). Stalls are always counted
 *   (nnrt_extflash_port_stats()); with NNRT_EXTFLASH_MODEL_STALL=1 the CPU also spins
 *   until the modelled completion, so QEMU's instruction count includes them.
 * - Failures are real: a missing file, a short read (the file is shorter than the
 *   header promised) or a semihosting error is NNRT_ERR_IO at read_wait().
 * Not modelled: AHB contention between DMA and CPU, and D-cache maintenance over the
 * staging buffers (none is needed when they sit in DTCM, as nnopt places them).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/extflash.h"
#include "nnrt/port.h"
#include "semihost.h"

#ifndef NNRT_EXTFLASH_BYTES_PER_S
#define NNRT_EXTFLASH_BYTES_PER_S 6750000u
#endif
#ifndef NNRT_EXTFLASH_CPU_HZ
#define NNRT_EXTFLASH_CPU_HZ 216000000u
#endif
#ifndef NNRT_EXTFLASH_SETUP_CYCLES
#define NNRT_EXTFLASH_SETUP_CYCLES 1080u /* 5 us at 216 MHz: command, address, DMA */
#endif
#ifndef NNRT_EXTFLASH_MODEL_STALL
#define NNRT_EXTFLASH_MODEL_STALL 0
#endif

typedef struct {
    int32_t handle;          /* semihosting file handle, -1 when closed */
    int pending;
    nnrt_status_t result;
    size_t pending_len;
    uint64_t ready_at;       /* counter value when the modelled transfer completes */
    nnrt_extflash_stats_t stats;
} sh_dev_t;

static sh_dev_t g_sh = {-1, 0, NNRT_OK, 0, 0, {0, 0, 0, 0}};
static nnrt_extflash_t g_dev;

static int32_t sh_call3(uint32_t op, uintptr_t a, uintptr_t b, uintptr_t c)
{
    uintptr_t block[3];

    block[0] = a;
    block[1] = b;
    block[2] = c;
    return nnrt_semihost(op, (uintptr_t)block);
}

static int32_t sh_call1(uint32_t op, uintptr_t a)
{
    uintptr_t block[1];

    block[0] = a;
    return nnrt_semihost(op, (uintptr_t)block);
}

/* Reads exactly len bytes at offset: 0 on success. */
static int sh_pread(int32_t handle, uint32_t offset, uint8_t *dst, size_t len)
{
    uintptr_t seek[2];

    seek[0] = (uintptr_t)handle;
    seek[1] = (uintptr_t)offset;
    if (nnrt_semihost(NNRT_SH_SYS_SEEK, (uintptr_t)seek) != 0) {
        return -1;
    }
    while (len > 0) {
        const int32_t left = sh_call3(NNRT_SH_SYS_READ, (uintptr_t)handle, (uintptr_t)dst, len);
        size_t done;

        if (left < 0 || (size_t)left > len) {
            return -1;
        }
        done = len - (size_t)left;
        if (done == 0) {
            return -1; /* end of file: a short read */
        }
        dst += done;
        len -= done;
    }
    return 0;
}

static uint64_t model_cycles(size_t len)
{
    return (uint64_t)NNRT_EXTFLASH_SETUP_CYCLES
           + ((uint64_t)len * (uint64_t)NNRT_EXTFLASH_CPU_HZ
              + (uint64_t)NNRT_EXTFLASH_BYTES_PER_S - 1u) / (uint64_t)NNRT_EXTFLASH_BYTES_PER_S;
}

static nnrt_status_t sh_read_start(nnrt_extflash_t *dev, uint32_t offset, size_t len, void *dst)
{
    sh_dev_t *d = (sh_dev_t *)dev->impl;

    if (d == NULL || d->handle < 0 || d->pending || (dst == NULL && len != 0)) {
        return NNRT_ERR_ARG;
    }
    if ((uint64_t)offset + (uint64_t)len > (uint64_t)dev->size) {
        return NNRT_ERR_ARG;
    }
    d->pending = 1;
    d->pending_len = len;
    d->ready_at = nnrt_port_counter() + model_cycles(len);
    d->result = (len == 0 || sh_pread(d->handle, offset, (uint8_t *)dst, len) == 0)
                    ? NNRT_OK : NNRT_ERR_IO;
    return NNRT_OK;
}

static nnrt_status_t sh_read_wait(nnrt_extflash_t *dev)
{
    sh_dev_t *d = (sh_dev_t *)dev->impl;
    uint64_t now;

    if (d == NULL || !d->pending) {
        return NNRT_ERR_ARG;
    }
    d->pending = 0;
    now = nnrt_port_counter();
    if (now < d->ready_at) {
        d->stats.stall_cycles += d->ready_at - now;
#if NNRT_EXTFLASH_MODEL_STALL
        while (nnrt_port_counter() < d->ready_at) {
        }
#endif
    }
    if (d->result == NNRT_OK) {
        d->stats.reads++;
        d->stats.bytes += d->pending_len;
        d->stats.model_cycles += model_cycles(d->pending_len);
    }
    return d->result;
}

nnrt_status_t nnrt_extflash_port_open(const char *path, nnrt_extflash_t **dev)
{
    int32_t len;

    if (path == NULL || dev == NULL) {
        return NNRT_ERR_ARG;
    }
    nnrt_extflash_port_close();
    g_sh.handle = sh_call3(NNRT_SH_SYS_OPEN, (uintptr_t)path, NNRT_SH_MODE_RB, strlen(path));
    if (g_sh.handle < 0) {
        g_sh.handle = -1;
        return NNRT_ERR_IO;
    }
    len = sh_call1(NNRT_SH_SYS_FLEN, (uintptr_t)g_sh.handle);
    if (len < 0) {
        nnrt_extflash_port_close();
        return NNRT_ERR_IO;
    }
    g_dev.read_start = sh_read_start;
    g_dev.read_wait = sh_read_wait;
    g_dev.size = (uint32_t)len;
    g_dev.impl = &g_sh;
    *dev = &g_dev;
    return NNRT_OK;
}

void nnrt_extflash_port_close(void)
{
    if (g_sh.handle >= 0) {
        (void)sh_call1(NNRT_SH_SYS_CLOSE, (uintptr_t)g_sh.handle);
    }
    memset(&g_sh, 0, sizeof(g_sh));
    g_sh.handle = -1;
    memset(&g_dev, 0, sizeof(g_dev));
}

nnrt_extflash_stats_t nnrt_extflash_port_stats(void)
{
    return g_sh.stats;
}
