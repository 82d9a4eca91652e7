/*
 * The swap driver's external flash on Zephyr (include/nnrt/extflash.h), CONFIG_NNRT_SWAP.
 *
 * One asynchronous read at a time: read_start() hands the transfer to the hardware or
 * to a thread and returns; read_wait() sleeps on a k_sem that the transfer gives when
 * it is done. Between the two the swap driver decrypts and the kernels compute.
 *
 * Sources (choice NNRT_SWAP_SOURCE):
 * - DEVICE: flash_read() on the flash device behind the devicetree alias nnrt-weights
 *   (or the device named by nnrt_extflash_port_open()'s argument), from
 *   CONFIG_NNRT_SWAP_OFFSET (include/zephyr/drivers/flash.h);
 * - PARTITION: flash_area_read() on the fixed partition labelled
 *   nnrt_weights_partition (include/zephyr/storage/flash_map.h);
 * - DISK: the disk CONFIG_NNRT_SWAP_DISK_NAME (an SD card over SPI, a RAM disk on
 *   QEMU), the blob from sector CONFIG_NNRT_SWAP_DISK_FIRST_SECTOR, read through the
 *   port's disk (include/nnrt/disk_zephyr.h, nnrt_disk_zephyr.c: disk_access_read() of
 *   include/zephyr/storage/disk_access.h): the sectors a chunk covers completely go
 *   straight into the staging buffer, its partial first and last sectors through a
 *   one-sector buffer.
 *   All three read on the port's I/O work queue (include/nnrt/io_zephyr.h,
 *   nnrt_io_zephyr.c; k_work_submit_to_queue(), include/zephyr/kernel.h), a thread of
 *   priority CONFIG_NNRT_SWAP_IO_PRIORITY shared with the tile device: a flash or
 *   card driver that moves data with DMA sleeps during the transfer and the compute
 *   thread runs.
 * - DMA: the blob is memory mapped at CONFIG_NNRT_SWAP_DMA_BASE; a memory-to-memory DMA
 *   channel of the controller behind the alias nnrt-dma copies it, in blocks of at most
 *   CONFIG_NNRT_SWAP_DMA_MAX_BLOCK bytes chained from the completion callback (DMA ISR),
 *   which gives the k_sem at the end (include/zephyr/drivers/dma.h: dma_callback_t,
 *   DMA_STATUS_COMPLETE, MEMORY_TO_MEMORY). The destination's data-cache lines are
 *   flushed and invalidated before the transfer and invalidated after it
 *   (include/zephyr/cache.h), so the CPU reads what the DMA wrote.
 *
 * Errors follow extflash.h: NNRT_ERR_ARG for a read outside the device, a second
 * read_start() while one is in flight, or read_wait() with none; NNRT_ERR_IO when the
 * driver fails (the bytes are then never handed out as valid).
 */
#include <errno.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/util.h>

#include "nnrt/extflash.h"
#include "nnrt/io_zephyr.h"

LOG_MODULE_DECLARE(nnrt, CONFIG_NNRT_LOG_LEVEL);

#if defined(CONFIG_NNRT_SWAP_SOURCE_DEVICE)
#include <zephyr/drivers/flash.h>
#define NNRT_XFLASH_NODE DT_ALIAS(nnrt_weights)
#elif defined(CONFIG_NNRT_SWAP_SOURCE_PARTITION)
#include <zephyr/storage/flash_map.h>
BUILD_ASSERT(FIXED_PARTITION_EXISTS(nnrt_weights_partition),
	     "CONFIG_NNRT_SWAP_SOURCE_PARTITION needs a fixed partition with the node "
	     "label nnrt_weights_partition");
#elif defined(CONFIG_NNRT_SWAP_SOURCE_DISK)
#include "nnrt/disk_zephyr.h"
#elif defined(CONFIG_NNRT_SWAP_SOURCE_DMA)
#include <zephyr/cache.h>
#include <zephyr/drivers/dma.h>
#define NNRT_DMA_NODE DT_ALIAS(nnrt_dma)
BUILD_ASSERT(DT_NODE_EXISTS(NNRT_DMA_NODE),
	     "CONFIG_NNRT_SWAP_SOURCE_DMA needs a devicetree alias nnrt-dma pointing to a "
	     "DMA controller that can copy memory to memory");
#else
#error "CONFIG_NNRT_SWAP needs one CONFIG_NNRT_SWAP_SOURCE_* choice"
#endif

struct zflash {
	struct k_sem done;    /* given by the transfer when it has finished */
	uint8_t *dst;
	uint32_t offset;      /* from the start of the blob */
	size_t len;
	volatile int result;  /* 0 or a negative errno, set before `done` is given */
	bool pending;         /* started and not yet waited for */
	bool is_open;
	nnrt_extflash_stats_t stats;
#if defined(CONFIG_NNRT_SWAP_SOURCE_DEVICE)
	const struct device *flash;
#elif defined(CONFIG_NNRT_SWAP_SOURCE_PARTITION)
	const struct flash_area *area;
#elif defined(CONFIG_NNRT_SWAP_SOURCE_DISK)
	struct nnrt_disk disk;
#endif
#if defined(CONFIG_NNRT_SWAP_SOURCE_DMA)
	struct dma_config cfg;
	struct dma_block_config block;
	int channel;
	size_t moved;         /* bytes of the current read already copied */
#else
	struct k_work work;
#endif
};

static struct zflash zf;
static nnrt_extflash_t zdev;

/* ---- thread-based sources: flash device, flash partition ------------------------- */

#if !defined(CONFIG_NNRT_SWAP_SOURCE_DMA)


#if defined(CONFIG_NNRT_SWAP_SOURCE_DEVICE)

/*
 * Size of the device: flash_get_size() where the driver implements it, else the end of
 * its last page (CONFIG_FLASH_PAGE_LAYOUT, implied by NNRT_SWAP_SOURCE_DEVICE).
 */
static int device_size(const struct device *dev, uint64_t *size)
{
	if (flash_get_size(dev, size) == 0) {
		return 0;
	}
#if defined(CONFIG_FLASH_PAGE_LAYOUT)
	size_t pages = flash_get_page_count(dev);
	struct flash_pages_info info;

	if (pages > 0 && flash_get_page_info_by_idx(dev, (uint32_t)(pages - 1u), &info) == 0) {
		*size = (uint64_t)info.start_offset + info.size;
		return 0;
	}
#endif
	return -ENOTSUP;
}

static int source_open(const char *name, uint32_t *bytes)
{
	uint64_t size = 0;

#if DT_NODE_EXISTS(NNRT_XFLASH_NODE)
	zf.flash = DEVICE_DT_GET(NNRT_XFLASH_NODE);
#else
	zf.flash = NULL;
#endif
	if (name != NULL && name[0] != '\0') {
		zf.flash = device_get_binding(name);
	}
	if (zf.flash == NULL) {
		LOG_ERR("no external flash: set the devicetree alias nnrt-weights or pass a "
			"device name");
		return -ENODEV;
	}
	if (!device_is_ready(zf.flash)) {
		LOG_ERR("flash device %s is not ready", zf.flash->name);
		return -ENODEV;
	}
	if (device_size(zf.flash, &size) != 0) {
		LOG_ERR("cannot tell the size of %s", zf.flash->name);
		return -ENOTSUP;
	}
	if (size <= CONFIG_NNRT_SWAP_OFFSET) {
		LOG_ERR("CONFIG_NNRT_SWAP_OFFSET 0x%x is beyond the end of %s",
			CONFIG_NNRT_SWAP_OFFSET, zf.flash->name);
		return -EINVAL;
	}
	*bytes = (uint32_t)MIN(size - CONFIG_NNRT_SWAP_OFFSET, (uint64_t)UINT32_MAX);
	return 0;
}

static int source_read(uint32_t offset, void *dst, size_t len)
{
	return flash_read(zf.flash, (off_t)CONFIG_NNRT_SWAP_OFFSET + (off_t)offset, dst, len);
}

#elif defined(CONFIG_NNRT_SWAP_SOURCE_DISK)

/* A chunk's partial first and last sectors (only the I/O thread touches it). */
static uint8_t disk_bounce[CONFIG_NNRT_SWAP_DISK_MAX_SECTOR] __aligned(4);

static int source_open(const char *name, uint32_t *bytes)
{
	int rc;

	ARG_UNUSED(name);
	rc = nnrt_disk_open(&zf.disk, CONFIG_NNRT_SWAP_DISK_NAME,
			    (uint32_t)CONFIG_NNRT_SWAP_DISK_FIRST_SECTOR, disk_bounce,
			    sizeof(disk_bounce), "CONFIG_NNRT_SWAP_DISK_FIRST_SECTOR",
			    "CONFIG_NNRT_SWAP_DISK_MAX_SECTOR");
	if (rc != 0) {
		return rc;
	}
	*bytes = (uint32_t)MIN((uint64_t)zf.disk.sectors * zf.disk.sector, (uint64_t)UINT32_MAX);
	return 0;
}

/* Bytes [offset, offset + len) of the blob. */
static int source_read(uint32_t offset, void *dst, size_t len)
{
	return nnrt_disk_read(&zf.disk, offset, dst, len);
}

#else /* CONFIG_NNRT_SWAP_SOURCE_PARTITION */

static int source_open(const char *name, uint32_t *bytes)
{
	int rc;

	ARG_UNUSED(name);
	rc = flash_area_open(FIXED_PARTITION_ID(nnrt_weights_partition), &zf.area);
	if (rc != 0) {
		LOG_ERR("cannot open partition nnrt_weights_partition (%d)", rc);
		return rc;
	}
	if (!flash_area_device_is_ready(zf.area)) {
		LOG_ERR("the device of partition nnrt_weights_partition is not ready");
		return -ENODEV;
	}
	*bytes = (uint32_t)MIN((uint64_t)zf.area->fa_size, (uint64_t)UINT32_MAX);
	return 0;
}

static int source_read(uint32_t offset, void *dst, size_t len)
{
	return flash_area_read(zf.area, (off_t)offset, dst, len);
}

#endif

static void io_handler(struct k_work *work)
{
	ARG_UNUSED(work);
	zf.result = source_read(zf.offset, zf.dst, zf.len);
	k_sem_give(&zf.done);
}

static int transfer_open(void)
{
	(void)nnrt_io_queue(); /* started here, in the opening thread */
	k_work_init(&zf.work, io_handler);
	return 0;
}

static int transfer_start(void)
{
	int rc = k_work_submit_to_queue(nnrt_io_queue(), &zf.work);

	/* 1: queued; 0: already queued (impossible: one read at a time) */
	return rc >= 0 ? 0 : rc;
}

static void transfer_finish(void)
{
}

/* ---- DMA source: memory-mapped flash ----------------------------------------------- */

#else /* CONFIG_NNRT_SWAP_SOURCE_DMA */

static const struct device *const dma_dev = DEVICE_DT_GET(NNRT_DMA_NODE);
static bool channel_claimed;

/* Largest width (1, 2 or 4 bytes) that divides both addresses and the length. */
static uint32_t dma_width(uintptr_t src, uintptr_t dst, size_t len)
{
	uintptr_t all = src | dst | (uintptr_t)len;

	if ((all & 3u) == 0u) {
		return 4u;
	}
	return (all & 1u) == 0u ? 2u : 1u;
}

static size_t dma_block_len(uint32_t width)
{
	size_t max = (size_t)CONFIG_NNRT_SWAP_DMA_MAX_BLOCK;

	max -= max % width;
	return MIN(zf.len - zf.moved, max);
}

static void dma_done(const struct device *dev, void *user_data, uint32_t channel, int status)
{
	uint32_t width = zf.cfg.source_data_size;
	uintptr_t src;
	size_t n;
	int rc;

	ARG_UNUSED(user_data);
	if (status < 0) {
		zf.result = status;
		k_sem_give(&zf.done);
		return;
	}
	if (status != DMA_STATUS_COMPLETE) {
		return; /* block and half-complete events are not requested */
	}
	zf.moved += zf.block.block_size;
	if (zf.moved >= zf.len) {
		zf.result = 0;
		k_sem_give(&zf.done);
		return;
	}
	src = (uintptr_t)CONFIG_NNRT_SWAP_DMA_BASE + zf.offset + zf.moved;
	n = dma_block_len(width);
	zf.block.block_size = (uint32_t)n;
	rc = dma_reload(dev, channel, (uint32_t)src, (uint32_t)(uintptr_t)(zf.dst + zf.moved), n);
	if (rc == 0) {
		rc = dma_start(dev, channel);
	}
	if (rc != 0) {
		zf.result = rc;
		k_sem_give(&zf.done);
	}
}

static int source_open(const char *name, uint32_t *bytes)
{
	ARG_UNUSED(name);
	if (!device_is_ready(dma_dev)) {
		LOG_ERR("DMA controller %s is not ready", dma_dev->name);
		return -ENODEV;
	}
	*bytes = (uint32_t)MIN((uint64_t)CONFIG_NNRT_SWAP_DMA_SIZE, (uint64_t)UINT32_MAX);
	return 0;
}

static int transfer_open(void)
{
	if (!channel_claimed) {
		zf.channel = dma_request_channel(dma_dev, NULL);
		if (zf.channel < 0) {
			LOG_ERR("no free channel on %s (%d)", dma_dev->name, zf.channel);
			return zf.channel;
		}
		channel_claimed = true;
	}
	return 0;
}

static int transfer_start(void)
{
	uintptr_t src = (uintptr_t)CONFIG_NNRT_SWAP_DMA_BASE + zf.offset;
	uint32_t width = dma_width(src, (uintptr_t)zf.dst, zf.len);
	int rc;

	/* No dirty line of the destination may later be written back over the data. */
	(void)sys_cache_data_flush_and_invd_range(zf.dst, zf.len);

	zf.moved = 0;
	memset(&zf.block, 0, sizeof(zf.block));
	zf.block.source_address = (uint32_t)src;
	zf.block.dest_address = (uint32_t)(uintptr_t)zf.dst;
	zf.block.block_size = (uint32_t)dma_block_len(width);
	zf.block.source_addr_adj = DMA_ADDR_ADJ_INCREMENT;
	zf.block.dest_addr_adj = DMA_ADDR_ADJ_INCREMENT;

	memset(&zf.cfg, 0, sizeof(zf.cfg));
	zf.cfg.channel_direction = MEMORY_TO_MEMORY;
	zf.cfg.source_data_size = width;
	zf.cfg.dest_data_size = width;
	/*
	 * Single transfers. The STM32F7's DMA (st,stm32-dma-v1) takes burst lengths in beats,
	 * 1, 4, 8 or 16 (drivers/dma/dma_stm32_v1.c: stm32_dma_get_mburst() and
	 * stm32_dma_get_pburst(), called by dma_stm32_configure() in drivers/dma/dma_stm32.c);
	 * the data width in bytes (2) is not one of them: the driver logs "burst size error"
	 * and falls back to single. Longer bursts also depend on the FIFO threshold check
	 * (stm32_dma_check_fifo_mburst(), same file), so ask for single transfers outright.
	 */
	zf.cfg.source_burst_length = 1;
	zf.cfg.dest_burst_length = 1;
	zf.cfg.block_count = 1;
	zf.cfg.head_block = &zf.block;
	zf.cfg.dma_callback = dma_done;

	rc = dma_config(dma_dev, (uint32_t)zf.channel, &zf.cfg);
	if (rc == 0) {
		rc = dma_start(dma_dev, (uint32_t)zf.channel);
	}
	return rc;
}

static void transfer_finish(void)
{
	/* Drop lines the CPU may have fetched speculatively during the transfer. */
	(void)sys_cache_data_invd_range(zf.dst, zf.len);
}

#endif /* CONFIG_NNRT_SWAP_SOURCE_DMA */

/* ---- nnrt_extflash_t ------------------------------------------------------------ */

static nnrt_status_t z_read_start(nnrt_extflash_t *dev, uint32_t offset, size_t len, void *dst)
{
	if (dev != &zdev || !zf.is_open || zf.pending || (dst == NULL && len != 0)) {
		return NNRT_ERR_ARG;
	}
	if ((uint64_t)offset + (uint64_t)len > (uint64_t)dev->size) {
		return NNRT_ERR_ARG;
	}
	zf.dst = dst;
	zf.offset = offset;
	zf.len = len;
	zf.result = 0;
	k_sem_reset(&zf.done);
	zf.pending = true;
	if (len == 0) {
		k_sem_give(&zf.done);
		return NNRT_OK;
	}
	if (transfer_start() != 0) {
		/* Report it at read_wait(), like a transfer that failed on the way. */
		zf.result = -EIO;
		k_sem_give(&zf.done);
	}
	return NNRT_OK;
}

static nnrt_status_t z_read_wait(nnrt_extflash_t *dev)
{
	uint32_t t0;

	if (dev != &zdev || !zf.pending) {
		return NNRT_ERR_ARG;
	}
	t0 = k_cycle_get_32();
	(void)k_sem_take(&zf.done, K_FOREVER);
	zf.stats.stall_cycles += (uint32_t)(k_cycle_get_32() - t0);
	zf.pending = false;
	if (zf.len != 0) {
		transfer_finish();
	}
	if (zf.result != 0) {
		LOG_ERR("external flash read of %u bytes at 0x%x failed (%d)",
			(unsigned int)zf.len, (unsigned int)zf.offset, zf.result);
		return NNRT_ERR_IO;
	}
	zf.stats.reads++;
	zf.stats.bytes += zf.len;
	return NNRT_OK;
}

/*
 * @p path: NULL or "" for the devicetree source (alias nnrt-weights, the partition or
 * the DMA window); with CONFIG_NNRT_SWAP_SOURCE_DEVICE, otherwise the name of a flash
 * device (device_get_binding()). The host and bare-metal ports take a file path here.
 */
nnrt_status_t nnrt_extflash_port_open(const char *path, nnrt_extflash_t **dev)
{
	uint32_t bytes = 0;

	if (dev == NULL) {
		return NNRT_ERR_ARG;
	}
	nnrt_extflash_port_close();
	k_sem_init(&zf.done, 0, 1);
	if (source_open(path, &bytes) != 0 || transfer_open() != 0) {
		return NNRT_ERR_IO;
	}
	zf.is_open = true;
	zdev.read_start = z_read_start;
	zdev.read_wait = z_read_wait;
	zdev.size = bytes;
	zdev.impl = &zf;
	*dev = &zdev;
	return NNRT_OK;
}

void nnrt_extflash_port_close(void)
{
	if (zf.pending) {
		(void)k_sem_take(&zf.done, K_FOREVER);
		zf.pending = false;
	}
	zf.is_open = false;
	memset(&zf.stats, 0, sizeof(zf.stats));
	memset(&zdev, 0, sizeof(zdev));
}

nnrt_extflash_stats_t nnrt_extflash_port_stats(void)
{
	return zf.stats;
}
