/**
 * @file disk_zephyr.h
 * @brief A disk for the port's storage on Zephyr: the weight source's SD card
 *        (CONFIG_NNRT_SWAP_SOURCE_DISK) and the tile device's (CONFIG_NNRT_SWAP_FM_DISK).
 *
 * One place opens a disk and moves byte ranges through whole sectors
 * (include/zephyr/storage/disk_access.h: disk_access_init(), disk_access_status(),
 * disk_access_ioctl() with DISK_IOCTL_GET_SECTOR_COUNT / _SIZE / DISK_IOCTL_CTRL_SYNC of
 * include/zephyr/drivers/disk.h, disk_access_read(), disk_access_write()). A range's
 * partial first and last sectors go through the caller's one-sector bounce buffer;
 * whole sectors go straight to or from the caller's memory. Port-internal.
 */
#ifndef NNRT_DISK_ZEPHYR_H_
#define NNRT_DISK_ZEPHYR_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An opened disk: the area from sector @c first to the end of the disk. */
struct nnrt_disk {
	const char *name;  /**< disk_access name ("SD", a RAM disk's disk-name) */
	uint32_t sector;   /**< bytes per sector (a power of two) */
	uint32_t first;    /**< first sector of the area */
	uint32_t sectors;  /**< sectors from @c first to the end of the disk */
	uint8_t *bounce;   /**< one sector, for partial first and last sectors */
};

/**
 * Initialise disk @p name and fill @p disk. Refuses (logged, with the option to change)
 * a disk that is not ready, sectors that are not a power of two or exceed
 * @p bounce_bytes (@p sector_option names the option that sizes the bounce buffer), and
 * a @p first beyond the disk (@p first_option names the option that sets it).
 * @return 0, or a negative errno of disk_access or -ENOTSUP / -EINVAL.
 */
int nnrt_disk_open(struct nnrt_disk *disk, const char *name, uint32_t first,
		   uint8_t *bounce, uint32_t bounce_bytes, const char *first_option,
		   const char *sector_option);

/** Read bytes [@p offset, @p offset + @p len) of the area into @p dst (any alignment).
 *  @return 0 or the negative errno of disk_access_read(). */
int nnrt_disk_read(const struct nnrt_disk *disk, uint64_t offset, void *dst, size_t len);

/** Write @p len bytes from @p src at @p offset of the area, which starts a sector; a
 *  partial last sector is padded with zeros. Waits until the disk has programmed them
 *  (DISK_IOCTL_CTRL_SYNC: a card acknowledges a write before it is programmed).
 *  @return 0, -EINVAL for an @p offset inside a sector, or the errno of disk_access. */
int nnrt_disk_write(const struct nnrt_disk *disk, uint64_t offset, const void *src,
		    size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_DISK_ZEPHYR_H_ */
