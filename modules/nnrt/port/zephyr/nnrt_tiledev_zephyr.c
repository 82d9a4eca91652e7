/*
 * The feature-map tile store's device on Zephyr (include/nnrt/tiledev_zephyr.h),
 * CONFIG_NNRT_SWAP_FM. The store (src/swap/fmstore.c) seals each tile and writes it at
 * a cursor going round the device; this file only maps the device calls onto Zephyr:
 *
 * - CONFIG_NNRT_SWAP_FM_FLASH_AREA: the fixed partition labelled nnrt_fm_partition
 *   (include/zephyr/storage/flash_map.h: flash_area_open(), flash_area_erase(),
 *   flash_area_write(), flash_area_read(), flash_area_align(), flash_area_erased_val(),
 *   flash_area_get_device(), flash_area_device_is_ready(), flash_area_close()) under
 *   the portable NOR tile device (src/swap/tiledev_nor.c), which erases each erase
 *   block when the ring enters it and pads a tile's last write block. The erase-block
 *   size is the flash page size (include/zephyr/drivers/flash.h:
 *   flash_get_page_info_by_offs(), CONFIG_FLASH_PAGE_LAYOUT), checked uniform over the
 *   partition; devices without explicit erase (flash_get_parameters(),
 *   flash_params_get_erase_cap(), same header) are written without erasing.
 * - CONFIG_NNRT_SWAP_FM_DISK: sectors of the disk CONFIG_NNRT_SWAP_FM_DISK_NAME
 *   through the port's disk (include/nnrt/disk_zephyr.h, nnrt_disk_zephyr.c:
 *   disk_access_write() / disk_access_read() of include/zephyr/storage/disk_access.h,
 *   each write synced). Tiles start on a sector (the device's unit); a tile's last,
 *   partial sector is written from and read through a one-sector buffer.
 *
 * Errors: NNRT_ERR_ARG outside the device (the store never asks), NNRT_ERR_IO when the
 * driver fails (logged with its errno).
 */
#include <errno.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/util.h>

#include "nnrt/fmstore.h"
#include "nnrt/tiledev_zephyr.h"

LOG_MODULE_DECLARE(nnrt, CONFIG_NNRT_LOG_LEVEL);

static nnrt_tiledev_t tdev;
static nnrt_tiledev_port_stats_t tstats;

#if defined(CONFIG_NNRT_SWAP_FM_FLASH_AREA)

#include <zephyr/drivers/flash.h>
#include <zephyr/storage/flash_map.h>

BUILD_ASSERT(FIXED_PARTITION_EXISTS(nnrt_fm_partition),
	     "CONFIG_NNRT_SWAP_FM_FLASH_AREA needs a fixed partition with the node label "
	     "nnrt_fm_partition (samples/swapnn/boards/*_fm.overlay)");

static const struct flash_area *fm_area;
static nnrt_tiledev_nor_t fm_nor;
static bool fm_explicit_erase;

static nnrt_status_t fa_erase(void *ctx, uint32_t offset, uint32_t len)
{
	int rc;

	ARG_UNUSED(ctx);
	if (!fm_explicit_erase) {
		return NNRT_OK; /* the device overwrites in place (RAM-like) */
	}
	rc = flash_area_erase(fm_area, (off_t)offset, len);
	if (rc != 0) {
		LOG_ERR("nnrt_fm_partition: erase of %u B at 0x%x failed (%d)", (unsigned int)len,
			(unsigned int)offset, rc);
		return NNRT_ERR_IO;
	}
	return NNRT_OK;
}

static nnrt_status_t fa_program(void *ctx, uint32_t offset, const void *src, size_t len)
{
	int rc;

	ARG_UNUSED(ctx);
	rc = flash_area_write(fm_area, (off_t)offset, src, len);
	if (rc != 0) {
		LOG_ERR("nnrt_fm_partition: write of %u B at 0x%x failed (%d)", (unsigned int)len,
			(unsigned int)offset, rc);
		return NNRT_ERR_IO;
	}
	return NNRT_OK;
}

static nnrt_status_t fa_read(void *ctx, uint32_t offset, void *dst, size_t len)
{
	int rc;

	ARG_UNUSED(ctx);
	rc = flash_area_read(fm_area, (off_t)offset, dst, len);
	if (rc != 0) {
		LOG_ERR("nnrt_fm_partition: read of %u B at 0x%x failed (%d)", (unsigned int)len,
			(unsigned int)offset, rc);
		return NNRT_ERR_IO;
	}
	return NNRT_OK;
}

/* The partition's erase-block size: the flash page at its start, the same for every page
 * up to its end (the NOR device erases whole blocks of one size). 0 when it is not. */
static uint32_t uniform_erase_block(const struct device *flash)
{
	struct flash_pages_info info;
	uint32_t block;

	if (flash_get_page_info_by_offs(flash, fm_area->fa_off, &info) != 0
	    || info.start_offset != fm_area->fa_off || info.size == 0u) {
		return 0u;
	}
	block = (uint32_t)info.size;
	for (off_t at = fm_area->fa_off + block; at < fm_area->fa_off + (off_t)fm_area->fa_size;
	     at += block) {
		if (flash_get_page_info_by_offs(flash, at, &info) != 0 || info.size != block) {
			return 0u;
		}
	}
	return block;
}

static int device_open(void)
{
	const struct device *flash;
	uint32_t block;
	int rc;

	rc = flash_area_open(FIXED_PARTITION_ID(nnrt_fm_partition), &fm_area);
	if (rc != 0) {
		LOG_ERR("cannot open partition nnrt_fm_partition (%d)", rc);
		return rc;
	}
	if (!flash_area_device_is_ready(fm_area)) {
		LOG_ERR("the device of partition nnrt_fm_partition is not ready");
		return -ENODEV;
	}
	flash = flash_area_get_device(fm_area);
	block = uniform_erase_block(flash);
	if (block == 0u || fm_area->fa_size % block != 0u) {
		LOG_ERR("nnrt_fm_partition must start on a flash page and be whole pages of one "
			"size");
		return -EINVAL;
	}
	fm_explicit_erase = (flash_params_get_erase_cap(flash_get_parameters(flash))
			     & FLASH_ERASE_C_EXPLICIT) != 0;
	memset(&fm_nor, 0, sizeof(fm_nor));
	fm_nor.erase = fa_erase;
	fm_nor.program = fa_program;
	fm_nor.read = fa_read;
	fm_nor.size = (uint32_t)MIN((uint64_t)fm_area->fa_size, (uint64_t)UINT32_MAX / block * block);
	fm_nor.erase_block = block;
	fm_nor.program_unit = flash_area_align(fm_area);
	fm_nor.erased = flash_area_erased_val(fm_area);
	if (nnrt_tiledev_nor_init(&tdev, &fm_nor) != NNRT_OK) {
		LOG_ERR("nnrt_fm_partition: erase block %u B, write block %u B: not usable "
			"(powers of two, write block <= %u B)", (unsigned int)block,
			(unsigned int)fm_nor.program_unit, (unsigned int)NNRT_TILEDEV_NOR_MAX_UNIT);
		return -EINVAL;
	}
	tstats.erase_block = block;
	return 0;
}

static uint32_t device_erases(void)
{
	return fm_nor.erases;
}

static void device_close(void)
{
	if (fm_area != NULL) {
		flash_area_close(fm_area);
		fm_area = NULL;
	}
}

#elif defined(CONFIG_NNRT_SWAP_FM_DISK)

#include "nnrt/disk_zephyr.h"

/* Sector sizes up to this are supported (SD cards: 512 B). */
#define FM_MAX_SECTOR 512u

static struct nnrt_disk fm_disk;
static uint8_t fm_bounce[FM_MAX_SECTOR] __aligned(4);

static nnrt_status_t disk_rc(int rc, const char *what, uint32_t offset, size_t len)
{
	if (rc != 0) {
		LOG_ERR("disk %s: %s of %u B at 0x%x failed (%d)", fm_disk.name, what,
			(unsigned int)len, (unsigned int)offset, rc);
		return NNRT_ERR_IO;
	}
	return NNRT_OK;
}

static nnrt_status_t disk_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
				size_t len)
{
	if (src == NULL || len == 0u || offset % fm_disk.sector != 0u
	    || (uint64_t)offset + ROUND_UP(len, fm_disk.sector) > dev->size) {
		return NNRT_ERR_ARG;
	}
	return disk_rc(nnrt_disk_write(&fm_disk, offset, src, len), "write", offset, len);
}

static nnrt_status_t disk_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
	if (dst == NULL || offset % fm_disk.sector != 0u || (uint64_t)offset + len > dev->size) {
		return NNRT_ERR_ARG; /* tiles start on a sector */
	}
	return disk_rc(nnrt_disk_read(&fm_disk, offset, dst, len), "read", offset, len);
}

static int device_open(void)
{
	uint32_t area, size;
	int rc;

	rc = nnrt_disk_open(&fm_disk, CONFIG_NNRT_SWAP_FM_DISK_NAME,
			    (uint32_t)CONFIG_NNRT_SWAP_FM_DISK_FIRST_SECTOR, fm_bounce,
			    sizeof(fm_bounce), "CONFIG_NNRT_SWAP_FM_DISK_FIRST_SECTOR",
			    "the tile device's 512-byte sector buffer");
	if (rc != 0) {
		return rc;
	}
	area = fm_disk.sectors;
	if (CONFIG_NNRT_SWAP_FM_DISK_SECTORS > 0) {
		if ((uint32_t)CONFIG_NNRT_SWAP_FM_DISK_SECTORS > area) {
			LOG_ERR("CONFIG_NNRT_SWAP_FM_DISK_SECTORS %u: disk %s has %u from the "
				"first", (unsigned int)CONFIG_NNRT_SWAP_FM_DISK_SECTORS,
				fm_disk.name, (unsigned int)area);
			return -EINVAL;
		}
		area = CONFIG_NNRT_SWAP_FM_DISK_SECTORS;
	}
	size = fm_disk.sector;
	tdev.write = disk_write;
	tdev.read = disk_read;
	tdev.size = (uint32_t)MIN((uint64_t)area * size, (uint64_t)UINT32_MAX / size * size);
	tdev.unit = size;
	tdev.impl = NULL;
	tstats.erase_block = size;
	return 0;
}

static uint32_t device_erases(void)
{
	return 0u; /* the card erases inside its writes */
}

static void device_close(void)
{
}

#else
#error "CONFIG_NNRT_SWAP_FM needs one CONFIG_NNRT_SWAP_FM_* device choice"
#endif

/* ---- writes behind and reads ahead on the I/O work queue (CONFIG_NNRT_SWAP_FM_ASYNC) -- */

static nnrt_tiledev_t inner;

#if defined(CONFIG_NNRT_SWAP_FM_ASYNC)

#include "nnrt/io_zephyr.h"

/*
 * One transfer on the port's I/O work queue (include/nnrt/io_zephyr.h; k_work,
 * k_work_submit_to_queue(), k_sem: include/zephyr/kernel.h): the tile write behind, or
 * the tile read ahead. The queue runs them in order, one at a time, so a read ahead
 * queued after a write reads what it wrote; the inference thread calls the device only
 * when neither is in flight (job_wait()), so no driver is ever entered twice at once.
 */
struct fm_job {
	struct k_work work;
	struct k_sem done;             /* given by the I/O thread when the transfer ends */
	uint8_t *buf;                  /* the job's own buffer */
	uint32_t offset;
	size_t len;
	volatile nnrt_status_t result; /* set before `done` is given */
	bool busy;                     /* submitted and not yet waited for */
	bool valid;                    /* read ahead: buf holds (or will hold) the range */
};

static uint8_t wb_buf[CONFIG_NNRT_SWAP_FM_ASYNC_BYTES] __aligned(4);
static uint8_t ra_buf[CONFIG_NNRT_SWAP_FM_ASYNC_BYTES] __aligned(4);
static struct fm_job wb = {.buf = wb_buf};
static struct fm_job ra = {.buf = ra_buf};
static nnrt_status_t wb_error; /* a write behind that failed, reported at the next call */

static void wb_handler(struct k_work *work)
{
	ARG_UNUSED(work);
	wb.result = inner.write(&inner, wb.offset, wb.buf, wb.len);
	k_sem_give(&wb.done);
}

static void ra_handler(struct k_work *work)
{
	ARG_UNUSED(work);
	ra.result = inner.read(&inner, ra.offset, ra.buf, ra.len);
	k_sem_give(&ra.done);
}

/* Wait for the job's transfer; counted as a wait only if it had not finished yet. */
static void job_wait(struct fm_job *j)
{
	if (!j->busy) {
		return;
	}
	if (k_sem_take(&j->done, K_NO_WAIT) != 0) {
		uint32_t t0 = k_cycle_get_32();

		(void)k_sem_take(&j->done, K_FOREVER);
		tstats.waits++;
		tstats.wait_cycles += (uint32_t)(k_cycle_get_32() - t0);
	}
	j->busy = false;
	if (j == &wb && wb.result != NNRT_OK && wb_error == NNRT_OK) {
		wb_error = wb.result;
	}
	if (j == &ra && ra.result != NNRT_OK) {
		ra.valid = false; /* the read() that wanted it reads again, synchronously */
	}
}

static void job_submit(struct fm_job *j)
{
	k_sem_reset(&j->done);
	j->result = NNRT_OK;
	j->busy = true;
	if (k_work_submit_to_queue(nnrt_io_queue(), &j->work) < 0) {
		j->result = NNRT_ERR_IO; /* reported like a failed transfer */
		k_sem_give(&j->done);
	}
}

/* The failed write behind, once: the store latches it and stops the inference. */
static nnrt_status_t take_wb_error(void)
{
	nnrt_status_t st = wb_error;

	wb_error = NNRT_OK;
	return st;
}

static bool ra_overlaps(uint32_t offset, size_t len)
{
	return ra.valid && offset < ra.offset + ra.len && ra.offset < offset + len;
}

static nnrt_status_t async_write(uint32_t offset, const void *src, size_t len)
{
	job_wait(&wb); /* one write behind at a time: its buffer is needed again */
	if (wb_error != NNRT_OK) {
		return take_wb_error();
	}
	if (ra_overlaps(offset, len)) {
		job_wait(&ra); /* read ahead of bytes about to change: drop it */
		ra.valid = false;
	}
	if (len > sizeof(wb_buf)) {
		/* no room for a second copy of this tile: synchronous */
		job_wait(&ra);
		tstats.sync_writes++;
		return inner.write(&inner, offset, src, len);
	}
	memcpy(wb_buf, src, len); /* the caller reuses its buffer at once */
	wb.offset = offset;
	wb.len = len;
	job_submit(&wb);
	tstats.writes_behind++;
	return NNRT_OK;
}

static nnrt_status_t async_read(uint32_t offset, void *dst, size_t len)
{
	nnrt_status_t st;

	if (ra.valid && ra.offset == offset && ra.len == len) {
		job_wait(&ra); /* the queue ran the writes before it: it holds what they wrote */
		if (ra.valid) {
			ra.valid = false;
			memcpy(dst, ra_buf, len);
			tstats.reads_ahead++;
			tstats.bytes_read_ahead += len;
			return NNRT_OK;
		}
	}
	job_wait(&wb);
	if (wb_error != NNRT_OK) {
		return take_wb_error();
	}
	job_wait(&ra); /* not the one wanted: let it finish (it may be wanted next) */
	st = inner.read(&inner, offset, dst, len);
	tstats.sync_reads++;
	return st;
}

static void async_prefetch(nnrt_tiledev_t *dev, uint32_t offset, size_t len)
{
	ARG_UNUSED(dev);
	if (len == 0u || len > sizeof(ra_buf) || ra.busy) {
		return; /* too large, or the last read ahead still running: no wait for a hint */
	}
	if ((uint64_t)offset + len > inner.size) {
		return;
	}
	ra.offset = offset;
	ra.len = len;
	ra.valid = true;
	job_submit(&ra);
}

static void async_open(void)
{
	(void)nnrt_io_queue(); /* started here, in the opening thread */
	k_work_init(&wb.work, wb_handler);
	k_work_init(&ra.work, ra_handler);
	k_sem_init(&wb.done, 0, 1);
	k_sem_init(&ra.done, 0, 1);
	wb.busy = ra.busy = ra.valid = false;
	wb_error = NNRT_OK;
}

static nnrt_status_t async_flush(void)
{
	job_wait(&wb);
	job_wait(&ra);
	return take_wb_error();
}

#else /* synchronous: every call completes its transfer */

static nnrt_status_t async_write(uint32_t offset, const void *src, size_t len)
{
	return inner.write(&inner, offset, src, len);
}

static nnrt_status_t async_read(uint32_t offset, void *dst, size_t len)
{
	return inner.read(&inner, offset, dst, len);
}

static void async_open(void)
{
}

static nnrt_status_t async_flush(void)
{
	return NNRT_OK;
}

#endif /* CONFIG_NNRT_SWAP_FM_ASYNC */

/* ---- statistics around the device's calls ------------------------------------------ */

static nnrt_status_t counted_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
				   size_t len)
{
	nnrt_status_t st = async_write(offset, src, len);

	ARG_UNUSED(dev);
	if (st == NNRT_OK) {
		tstats.writes++;
		tstats.bytes_written += len;
	}
	return st;
}

static nnrt_status_t counted_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
	nnrt_status_t st = async_read(offset, dst, len);

	ARG_UNUSED(dev);
	if (st == NNRT_OK) {
		tstats.reads++;
		tstats.bytes_read += len;
	}
	return st;
}

nnrt_status_t nnrt_tiledev_port_open(nnrt_tiledev_t **dev)
{
	static nnrt_tiledev_t outer;

	if (dev == NULL) {
		return NNRT_ERR_ARG;
	}
	nnrt_tiledev_port_close();
	memset(&tstats, 0, sizeof(tstats));
	memset(&tdev, 0, sizeof(tdev));
	if (device_open() != 0) {
		device_close();
		return NNRT_ERR_IO;
	}
	async_open();
	inner = tdev;
	outer = tdev;
	outer.write = counted_write;
	outer.read = counted_read;
#if defined(CONFIG_NNRT_SWAP_FM_ASYNC)
	outer.prefetch = async_prefetch;
#endif
	*dev = &outer;
	return NNRT_OK;
}

nnrt_status_t nnrt_tiledev_port_flush(void)
{
	return async_flush();
}

nnrt_tiledev_port_stats_t nnrt_tiledev_port_stats(void)
{
	nnrt_tiledev_port_stats_t s = tstats;

	s.erases = device_erases();
	return s;
}

void nnrt_tiledev_port_close(void)
{
	(void)async_flush();
	device_close();
}
