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
 * Transfers complete before the calls return (the store's put/get are synchronous).
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
} nnrt_tiledev_port_stats_t;

/** Open the configured device (NNRT_ERR_IO, logged, when it is missing, not ready or
 *  has a geometry the store cannot use) and point *dev at it. Opening again starts the
 *  statistics again. */
nnrt_status_t nnrt_tiledev_port_open(nnrt_tiledev_t **dev);

/** The device's statistics. */
nnrt_tiledev_port_stats_t nnrt_tiledev_port_stats(void);

/** Close the device (flash area: flash_area_close()). */
void nnrt_tiledev_port_close(void);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_TILEDEV_ZEPHYR_H_ */
