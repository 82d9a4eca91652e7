/**
 * @file tiledev_zephyr.h
 * @brief The feature-map tile store's device on Zephyr storage (CONFIG_NNRT_SWAP_FM).
 *
 * A generated model whose feature maps go out of core is attached to a tile device
 * (nnrt/fmstore.h: <name>_fm_attach(dev, key, key_len, algorithm, salt)). On Zephyr the
 * device is one of (choice NNRT_SWAP_FM_DEVICE, modules/nnrt/Kconfig):
 *
 * - CONFIG_NNRT_SWAP_FM_FLASH_AREA: the fixed partition labelled nnrt_fm_partition,
 *   through the NOR tile device (src/swap/tiledev_nor.c: erase before write, the ring
 *   erasing each block once per pass) over flash_area_erase() / flash_area_write() /
 *   flash_area_read();
 * - CONFIG_NNRT_SWAP_FM_DISK: sectors of the disk CONFIG_NNRT_SWAP_FM_DISK_NAME (an SD
 *   card over SPI) through disk_access_write() / disk_access_read().
 *
 * With CONFIG_NNRT_SWAP_FM_ASYNC the device writes behind and reads ahead on the port's
 * I/O work queue (include/nnrt/io_zephyr.h): a tile write is copied into a buffer of
 * CONFIG_NNRT_SWAP_FM_ASYNC_BYTES and handed to the I/O thread, so the next band
 * computes (and the next tile is sealed) while it is written; after a tile is read the
 * store names the next tile (nnrt_tiledev_t.prefetch) and the I/O thread reads it into a
 * second such buffer while this one is opened and computed on. A tile larger than the
 * buffers is written and read synchronously. A write that fails is reported by the
 * device's next call (the store then stops the inference) or by
 * nnrt_tiledev_port_flush(). Without it, transfers complete before the calls return.
 */
#ifndef NNRT_TILEDEV_ZEPHYR_H_
#define NNRT_TILEDEV_ZEPHYR_H_

#include <stdint.h>

#include "nnrt/fmstore.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the device did since it was opened (measured, not modelled). */
typedef struct {
    uint32_t writes;        /**< tiles written */
    uint32_t reads;         /**< tiles read */
    uint64_t bytes_written; /**< sealed bytes (tags included, padding excluded) */
    uint64_t bytes_read;
    uint32_t erases;        /**< erase-block erases (flash partition; 0 on a disk) */
    uint32_t erase_block;   /**< bytes per erase (flash) or per sector (disk) */
    /* CONFIG_NNRT_SWAP_FM_ASYNC (all 0 without it): */
    uint32_t writes_behind; /**< writes handed to the I/O thread (the caller went on) */
    uint32_t sync_writes;   /**< writes too large for the buffer: done in the call */
    uint32_t reads_ahead;   /**< reads served from the read-ahead buffer */
    uint64_t bytes_read_ahead;
    uint32_t sync_reads;    /**< reads done in the call (no read ahead matched) */
    uint32_t waits;         /**< times the caller blocked on a transfer still running */
    uint32_t wait_cycles;   /**< k_cycle_get_32() cycles spent blocked there */
} nnrt_tiledev_port_stats_t;

/** Open the configured device (NNRT_ERR_IO, logged, when it is missing, not ready or
 *  has a geometry the store cannot use) and point *dev at it. Opening again starts the
 *  statistics again. */
nnrt_status_t nnrt_tiledev_port_open(nnrt_tiledev_t **dev);

/** Wait for every transfer in flight (CONFIG_NNRT_SWAP_FM_ASYNC); NNRT_ERR_IO if a write
 *  behind failed and no call has reported it yet, else NNRT_OK. Call it before looking
 *  at the medium directly (or at the statistics' erase count). */
nnrt_status_t nnrt_tiledev_port_flush(void);

/** The device's statistics. */
nnrt_tiledev_port_stats_t nnrt_tiledev_port_stats(void);

/** Finish the transfers in flight and close the device (flash area: flash_area_close()). */
void nnrt_tiledev_port_close(void);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_TILEDEV_ZEPHYR_H_ */
