/**
 * @file extflash.h
 * @brief External flash as the swap driver sees it: one asynchronous read at a time.
 *
 * A device is a small vtable plus its state. The swap driver issues
 * `read_start(offset, len, dst)` and later `read_wait()`; between the two the CPU
 * computes while the transfer runs (DMA on hardware). At most one read is in flight;
 * `dst` must stay untouched until `read_wait()` returns. This is the shape of a NOR
 * flash read over SPI/QSPI with a DMA channel: one command, a stream of bytes into
 * memory, one completion interrupt.
 *
 * Implementations:
 * - `port/host/extflash_file.c`: a file read with stdio (the read happens in
 *   `read_start`; host timing is not modelled);
 * - `port/baremetal/extflash_semihost.c`: a file on the machine running QEMU, read
 *   through semihosting, with a bandwidth model (see that file);
 * - a Zephyr port would wrap `flash_read()` in a work item, or `dma_*` + QSPI.
 *
 * Errors: NNRT_ERR_IO for a failed or short transfer (the driver never hands out
 * bytes that did not arrive), NNRT_ERR_ARG for a read outside the device, a second
 * `read_start` while one is in flight, or `read_wait` with none.
 */
#ifndef NNRT_EXTFLASH_H_
#define NNRT_EXTFLASH_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnrt_extflash nnrt_extflash_t;

/** The operations of an external flash device. */
struct nnrt_extflash {
    /**
     * Start reading @p len bytes at byte @p offset of the device into @p dst.
     * @return NNRT_OK (the read is in flight, or already done), NNRT_ERR_ARG, NNRT_ERR_IO
     */
    nnrt_status_t (*read_start)(nnrt_extflash_t *dev, uint32_t offset, size_t len,
                                void *dst);
    /**
     * Wait for the read in flight to finish.
     * @return NNRT_OK when all bytes arrived, NNRT_ERR_IO on a failed or short
     *         transfer, NNRT_ERR_ARG when no read is in flight
     */
    nnrt_status_t (*read_wait)(nnrt_extflash_t *dev);
    /** Bytes of the device (the blob image); reads must stay below it. */
    uint32_t size;
    /** Implementation state. */
    void *impl;
};

/** Counters a device may keep (all zero when it does not). */
typedef struct {
    uint64_t reads;          /**< completed transfers */
    uint64_t bytes;          /**< bytes transferred */
    uint64_t model_cycles;   /**< modelled bus time of all transfers, in CPU cycles */
    uint64_t stall_cycles;   /**< modelled time the CPU waited in read_wait() */
} nnrt_extflash_stats_t;

/**
 * Open the port's external flash device on an image file (host: a regular file;
 * QEMU: a host file through semihosting). One device per program.
 *
 * @param path  the blob file
 * @param dev   receives the device
 * @return NNRT_OK, NNRT_ERR_IO (cannot open), NNRT_ERR_FORMAT (larger than 4 GiB - 1)
 */
nnrt_status_t nnrt_extflash_port_open(const char *path, nnrt_extflash_t **dev);

/** Close the port's device (a no-op when none is open). */
void nnrt_extflash_port_close(void);

/** Counters of the port's device since it was opened (zeros if none is open). */
nnrt_extflash_stats_t nnrt_extflash_port_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_EXTFLASH_H_ */
