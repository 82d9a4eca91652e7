/*
 * The swap driver on Zephyr: the port's external flash (nnrt/extflash.h,
 * modules/nnrt/port/zephyr/nnrt_extflash_zephyr.c) on Zephyr's flash simulator, and
 * the driver itself (nnrt/swap.h, modules/nnrt/src/swap) with Zephyr's PSA Crypto,
 * opening a blob sealed by the compiler's writer (swap_test_blob.h, generated at build
 * time by gen_test_blob.py). The blob is written to the simulated flash before every
 * test, at CONFIG_NNRT_SWAP_OFFSET.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/flash.h>
#include <zephyr/ztest.h>

#include "nnrt/extflash.h"
#include "nnrt/swap.h"
#include "swap_test_blob.h"

#define FLASH_NODE DT_ALIAS(nnrt_weights)
#define DEV_BYTES ((size_t)DT_REG_SIZE(DT_CHILD(FLASH_NODE, flash_sim_0)))
#define WRITE_BLOCK 4u
#define BLOB_OFFSET ((size_t)CONFIG_NNRT_SWAP_OFFSET)
#define STAGING NNRT_SWAP_STAGING_BYTES(TEST_MAX_PLAIN)

BUILD_ASSERT(BLOB_OFFSET + sizeof(test_blob) <= DEV_BYTES, "the blob does not fit");

static const struct device *const flash_dev = DEVICE_DT_GET(FLASH_NODE);

static uint8_t stage0[STAGING] __aligned(16);
static uint8_t stage1[STAGING] __aligned(16);
static uint8_t table[TEST_CHUNKS * NNRT_SWAP_ENTRY_BYTES] __aligned(4);
static uint8_t buf[256] __aligned(4);
static uint8_t word[WRITE_BLOCK] __aligned(4);

static nnrt_extflash_t *dev;
static nnrt_swap_t swap;

/* Erase the device and write the blob (padded to the write block) at BLOB_OFFSET. */
static void write_blob(void)
{
	size_t whole = sizeof(test_blob) - sizeof(test_blob) % WRITE_BLOCK;

	zassert_ok(flash_erase(flash_dev, 0, DEV_BYTES));
	zassert_ok(flash_write(flash_dev, (off_t)BLOB_OFFSET, test_blob, whole));
	if (whole < sizeof(test_blob)) {
		memset(word, 0, sizeof(word));
		memcpy(word, test_blob + whole, sizeof(test_blob) - whole);
		zassert_ok(flash_write(flash_dev, (off_t)(BLOB_OFFSET + whole), word, sizeof(word)));
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != 0u) {
			return false;
		}
	}
	return true;
}

static nnrt_swap_config_t config(const uint8_t *key, const uint8_t *layout)
{
	nnrt_swap_config_t cfg = {
		.dev = dev,
		.key = key,
		.key_len = sizeof(test_key),
		.algorithm = TEST_ALGORITHM,
		.layout_id = layout,
		.expect_chunks = TEST_CHUNKS,
		.staging = {stage0, stage1},
		.staging_bytes = sizeof(stage0),
		.table = table,
		.table_capacity = TEST_CHUNKS,
		.prefetch_next = 1,
	};

	return cfg;
}

static void *suite_setup(void)
{
	zassert_true(device_is_ready(flash_dev), "flash simulator not ready");
	return NULL;
}

static void before(void *fixture)
{
	ARG_UNUSED(fixture);
	write_blob();
	zassert_equal(nnrt_extflash_port_open(NULL, &dev), NNRT_OK);
	memset(&swap, 0, sizeof(swap));
}

static void after(void *fixture)
{
	ARG_UNUSED(fixture);
	nnrt_swap_close(&swap);
	nnrt_extflash_port_close();
}

ZTEST(nnrt_swap, test_device_size_and_reads)
{
	zassert_equal(dev->size, DEV_BYTES - BLOB_OFFSET);
	zassert_equal(dev->read_start(dev, 3, 200, buf), NNRT_OK);
	/* One read at a time. */
	zassert_equal(dev->read_start(dev, 0, 4, buf), NNRT_ERR_ARG);
	zassert_equal(dev->read_wait(dev), NNRT_OK);
	zassert_mem_equal(buf, test_blob + 3, 200);
	zassert_equal(dev->read_wait(dev), NNRT_ERR_ARG, "no read in flight");
	zassert_equal(dev->read_start(dev, dev->size - 2, 4, buf), NNRT_ERR_ARG,
		      "a read past the end must be refused");
	zassert_equal(nnrt_extflash_port_stats().reads, 1u);
	zassert_equal(nnrt_extflash_port_stats().bytes, 200u);
}

ZTEST(nnrt_swap, test_open_by_device_name)
{
	nnrt_extflash_t *named = NULL;

	nnrt_extflash_port_close();
	zassert_equal(nnrt_extflash_port_open(flash_dev->name, &named), NNRT_OK);
	zassert_equal(named->size, DEV_BYTES - BLOB_OFFSET);
	nnrt_extflash_port_close();
	zassert_equal(nnrt_extflash_port_open("no-such-device", &named), NNRT_ERR_IO);
	zassert_equal(nnrt_extflash_port_open(NULL, &dev), NNRT_OK);
}

ZTEST(nnrt_swap, test_streams_every_chunk)
{
	nnrt_swap_config_t cfg = config(test_key, test_layout);

	zassert_equal(nnrt_swap_open(&swap, &cfg), NNRT_OK);
	zassert_equal(nnrt_swap_chunk_count(&swap), TEST_CHUNKS);
	zassert_equal(nnrt_swap_start(&swap, 0), NNRT_OK);
	for (uint32_t k = 0; k < TEST_CHUNKS; k++) {
		const uint8_t *data = NULL;
		size_t len = 0;

		zassert_equal(nnrt_swap_wait(&swap, k, &data, &len), NNRT_OK, "chunk %u",
			      (unsigned int)k);
		zassert_equal(len, test_plain_bytes[k], "chunk %u length", (unsigned int)k);
		zassert_mem_equal(data, test_plain[k], len, "chunk %u plaintext", (unsigned int)k);
	}
	zassert_equal(nnrt_swap_stats(&swap).chunks, TEST_CHUNKS);
}

ZTEST(nnrt_swap, test_wrong_key_fails_authentication)
{
	uint8_t key[sizeof(test_key)];
	const uint8_t *data = NULL;

	/* The key is filled in before config() takes its address: GCC's
	 * -Wmaybe-uninitialized flags passing an uninitialized array to a const pointer.
	 */
	memcpy(key, test_key, sizeof(key));
	key[0] ^= 0x01u;
	nnrt_swap_config_t cfg = config(key, test_layout);

	zassert_equal(nnrt_swap_open(&swap, &cfg), NNRT_OK);
	zassert_equal(nnrt_swap_wait(&swap, 0, &data, NULL), NNRT_ERR_AUTH);
	/* Sticky: nothing more comes out of this blob. */
	zassert_equal(nnrt_swap_wait(&swap, 1, &data, NULL), NNRT_ERR_AUTH);
}

ZTEST(nnrt_swap, test_other_layout_is_refused)
{
	uint8_t layout[NNRT_SWAP_LAYOUT_ID_BYTES];

	memcpy(layout, test_layout, sizeof(layout));
	layout[NNRT_SWAP_LAYOUT_ID_BYTES - 1] ^= 0x80u;
	nnrt_swap_config_t cfg = config(test_key, layout);

	zassert_equal(nnrt_swap_open(&swap, &cfg), NNRT_ERR_FORMAT);
}

ZTEST(nnrt_swap, test_modified_chunk_is_refused)
{
	nnrt_swap_config_t cfg = config(test_key, test_layout);
	nnrt_swap_chunk_t info;
	const uint8_t *data = NULL;
	uint32_t at;

	zassert_equal(nnrt_swap_open(&swap, &cfg), NNRT_OK);
	zassert_equal(nnrt_swap_chunk_info(&swap, 1, &info), NNRT_OK);
	/* Clear one set bit inside chunk 1's ciphertext (flash writes only clear bits). */
	at = (uint32_t)(BLOB_OFFSET + info.offset + 64u) & ~(WRITE_BLOCK - 1u);
	zassert_ok(flash_read(flash_dev, (off_t)at, word, sizeof(word)));
	for (size_t i = 0; i < sizeof(word); i++) {
		if (word[i] != 0u) {
			word[i] &= (uint8_t)(word[i] - 1u); /* clears the lowest set bit */
			break;
		}
	}
	zassert_ok(flash_write(flash_dev, (off_t)at, word, sizeof(word)));

	zassert_equal(nnrt_swap_wait(&swap, 0, &data, NULL), NNRT_OK, "chunk 0 is intact");
	zassert_equal(nnrt_swap_wait(&swap, 1, &data, NULL), NNRT_ERR_AUTH);
	/* The buffer that held the refused chunk is zeroed: no unauthenticated byte left. */
	zassert_true(all_zero(stage0, info.sealed_bytes) || all_zero(stage1, info.sealed_bytes),
		     "the refused chunk's staging buffer must be zeroed");
}

ZTEST_SUITE(nnrt_swap, NULL, suite_setup, before, after, NULL);
