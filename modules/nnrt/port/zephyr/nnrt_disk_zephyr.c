/*
 * A disk for the port's storage (include/nnrt/disk_zephyr.h): the weight source
 * (nnrt_extflash_zephyr.c, CONFIG_NNRT_SWAP_SOURCE_DISK) and the feature-map tile
 * device (nnrt_tiledev_zephyr.c, CONFIG_NNRT_SWAP_FM_DISK) open and move bytes here.
 * Zephyr APIs: include/zephyr/storage/disk_access.h (disk_access_init(),
 * disk_access_status(), disk_access_ioctl(), disk_access_read(), disk_access_write())
 * and the ioctl codes and DISK_STATUS_OK of include/zephyr/drivers/disk.h.
 */
#include <errno.h>
#include <string.h>

#include <zephyr/drivers/disk.h>
#include <zephyr/logging/log.h>
#include <zephyr/storage/disk_access.h>
#include <zephyr/sys/util.h>

#include "nnrt/disk_zephyr.h"

LOG_MODULE_DECLARE(nnrt, CONFIG_NNRT_LOG_LEVEL);

int nnrt_disk_open(struct nnrt_disk *disk, const char *name, uint32_t first,
		   uint8_t *bounce, uint32_t bounce_bytes, const char *first_option,
		   const char *sector_option)
{
	uint32_t count = 0u, size = 0u;
	int rc;

	rc = disk_access_init(name);
	if (rc == 0 && disk_access_status(name) != DISK_STATUS_OK) {
		rc = -EIO;
	}
	if (rc == 0) {
		rc = disk_access_ioctl(name, DISK_IOCTL_GET_SECTOR_COUNT, &count);
	}
	if (rc == 0) {
		rc = disk_access_ioctl(name, DISK_IOCTL_GET_SECTOR_SIZE, &size);
	}
	if (rc != 0) {
		LOG_ERR("disk %s is not ready (%d): check its name and the card", name, rc);
		return rc;
	}
	if (size == 0u || size > bounce_bytes || (size & (size - 1u)) != 0u) {
		LOG_ERR("disk %s has %u-byte sectors; supported: powers of two up to %u (%s)",
			name, (unsigned int)size, (unsigned int)bounce_bytes, sector_option);
		return -ENOTSUP;
	}
	if (first >= count) {
		LOG_ERR("%s %u is beyond disk %s (%u sectors)", first_option,
			(unsigned int)first, name, (unsigned int)count);
		return -EINVAL;
	}
	disk->name = name;
	disk->sector = size;
	disk->first = first;
	disk->sectors = count - first;
	disk->bounce = bounce;
	return 0;
}

int nnrt_disk_read(const struct nnrt_disk *disk, uint64_t offset, void *dst, size_t len)
{
	const uint32_t ss = disk->sector;
	uint8_t *p = dst;
	uint32_t sector = disk->first + (uint32_t)(offset / ss);
	uint32_t skip = (uint32_t)(offset % ss);
	int rc = 0;

	if (skip != 0u && len != 0u) { /* the partial first sector */
		size_t n = MIN(len, (size_t)(ss - skip));

		rc = disk_access_read(disk->name, disk->bounce, sector, 1u);
		if (rc != 0) {
			return rc;
		}
		memcpy(p, disk->bounce + skip, n);
		p += n;
		len -= n;
		sector++;
	}
	if (len >= ss) { /* whole sectors, straight into the caller's memory */
		uint32_t whole = (uint32_t)(len / ss);

		rc = disk_access_read(disk->name, p, sector, whole);
		if (rc != 0) {
			return rc;
		}
		p += (size_t)whole * ss;
		len -= (size_t)whole * ss;
		sector += whole;
	}
	if (len != 0u) { /* the partial last sector */
		rc = disk_access_read(disk->name, disk->bounce, sector, 1u);
		if (rc == 0) {
			memcpy(p, disk->bounce, len);
		}
	}
	return rc;
}

int nnrt_disk_write(const struct nnrt_disk *disk, uint64_t offset, const void *src,
		    size_t len)
{
	const uint32_t ss = disk->sector;
	const uint8_t *p = src;
	uint32_t whole = (uint32_t)(len / ss);
	uint32_t sector = disk->first + (uint32_t)(offset / ss);
	int rc = 0;

	if (offset % ss != 0u) {
		return -EINVAL;
	}
	if (whole > 0u) {
		rc = disk_access_write(disk->name, p, sector, whole);
	}
	if (rc == 0 && len % ss != 0u) {
		memset(disk->bounce, 0, ss);
		memcpy(disk->bounce, p + (size_t)whole * ss, len % ss);
		rc = disk_access_write(disk->name, disk->bounce, sector + whole, 1u);
	}
	if (rc == 0) {
		rc = disk_access_ioctl(disk->name, DISK_IOCTL_CTRL_SYNC, NULL);
	}
	return rc;
}
