/*
 * nnopt swapnn, feature maps out of core (CMakeLists.txt: SWAPNN_FM): a model whose
 * activations (69,120 B at their peak) exceed the RAM budget it was planned for
 * (50,000 B), so the planner writes two feature maps out after their last use and reads
 * them back before their next (nnopt optimize --feature-maps auto). The generated code
 * seals each tile with the PSA AEAD of CONFIG_NNRT_SWAP_CRYPTO and puts it on the tile
 * device: here the flash partition nnrt_fm_partition of Zephyr's flash simulator
 * (fm_partition.overlay), through the port's flash_area binding
 * (CONFIG_NNRT_SWAP_FM_FLASH_AREA, include/nnrt/tiledev_zephyr.h: erase before write,
 * tiles written round the partition as a ring), or with SWAPNN_FM=disk a RAM disk
 * through the port's disk_access binding (CONFIG_NNRT_SWAP_FM_DISK, fm_ramdisk.overlay).
 *
 * The key and the nonce salt are drawn at boot (psa_generate_random(), PSA Crypto API
 * <psa/crypto.h>): feature maps live for one inference, so the key never leaves RAM.
 * Every inference's output is compared byte for byte with the tflite-micro
 * interpreter's (swapnn_fm_expected.h, written at build time by fm_model.py).
 *
 * Attacks (SWAPNN_FM_TAMPER, set by CMakeLists.txt from SWAPNN_FM), done by an attacker
 * device between the model and the port's device, directly on the flash with
 * flash_area_read() / flash_area_erase() / flash_area_write()
 * (include/zephyr/storage/flash_map.h), after the real write:
 *   1 bitflip: one bit of the first tile written (inference 1) inverted in the flash;
 *   2 stale:   inference 2's first tile overwritten in the flash by inference 1's sealed
 *              copy of the same tile (a replay of an earlier inference's tile).
 * Either way get() fails authentication: the inference returns NNRT_ERR_AUTH, its output
 * is not read, and the next inference (no attack) runs clean.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <psa/crypto.h>
#include <zephyr/kernel.h>
#include <zephyr/storage/flash_map.h>
#include <zephyr/sys/printk.h>

#include "nnrt/fmstore.h"
#include "nnrt/swap.h"
#include "nnrt/tiledev_zephyr.h"
#if defined(SWAPNN_FM_STREAM)
#include "nnrt/extflash.h"
#endif

#include MODEL_HEADER
#include PLAN_HEADER
#include "swapnn_fm_expected.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define PLAN(field) CAT(PLAN_PREFIX, CAT(_PLAN_, field))

#ifndef SWAPNN_FM_TAMPER
#define SWAPNN_FM_TAMPER 0
#endif
#define TAMPER_BITFLIP 1
#define TAMPER_STALE 2

#if defined(CONFIG_NNRT_SWAP_CRYPTO_AES_128_GCM)
#define FM_ALG NNRT_SWAP_ALG_AES_128_GCM
#define FM_KEY_BYTES 16u
#else
#define FM_ALG NNRT_SWAP_ALG_CHACHA20_POLY1305
#define FM_KEY_BYTES 32u
#endif

nnrt_status_t MODEL_FM_ATTACH(nnrt_tiledev_t *dev, const uint8_t *key, size_t key_len,
			      uint32_t algorithm, const uint8_t salt[4]);

#if defined(SWAPNN_FM_STREAM)
/*
 * SWAPNN_FM=stream: the model's weights are streamed too (nnopt optimize --swap force),
 * from the weight disk (CONFIG_NNRT_SWAP_SOURCE_DISK, weights_disk.overlay), through the
 * same I/O thread as the tiles' transfers. <name>_swap_attach() checks the blob's header,
 * layout id and chunk table and imports the key compiled into the model.
 */
nnrt_status_t MODEL_SWAP_ATTACH(nnrt_extflash_t *dev);
nnrt_swap_stats_t MODEL_SWAP_STATS(void);

static bool attach_weights(void)
{
	nnrt_extflash_t *dev = NULL;
	nnrt_status_t st = nnrt_extflash_port_open(NULL, &dev);

	if (st == NNRT_OK) {
		st = MODEL_SWAP_ATTACH(dev);
	}
	if (st != NNRT_OK) {
		printk("swapnn-fm: FAIL attaching the weight blob on disk %s (status %d)\n",
		       CONFIG_NNRT_SWAP_DISK_NAME, (int)st);
		return false;
	}
	printk("swapnn-fm: weights streamed from disk %s (%u B), %u chunks\n",
	       CONFIG_NNRT_SWAP_DISK_NAME, (unsigned int)dev->size,
	       (unsigned int)CAT(PLAN_PREFIX, _SWAP_CHUNKS));
	return true;
}
#endif

/* ---- the attacker: between the model's tile store and the port's device ------------ */

static nnrt_tiledev_t *real_dev;
static nnrt_tiledev_t attacker;
static uint32_t writes;
static uint32_t first_off, first_len; /* where the first tile of inference 1 went */

#if defined(CONFIG_NNRT_SWAP_FM_FLASH_AREA)
static uint8_t block[4096];

/*
 * Rewrite [off, off + len) of the partition, erase block by erase block (read, patch,
 * erase, program): with flip, bit 0 of each byte inverted; else the bytes copied from
 * src_off (which must lie in other blocks).
 */
static bool rewrite(uint32_t off, uint32_t len, bool flip, uint32_t src_off)
{
	const struct flash_area *fa;
	uint32_t eb = nnrt_tiledev_port_stats().erase_block;
	bool ok = eb != 0u && eb <= sizeof(block);

	/* The real write may still be running on the I/O thread (CONFIG_NNRT_SWAP_FM_ASYNC):
	 * let it land first, as an attacker with time would. */
	ok = ok && nnrt_tiledev_port_flush() == NNRT_OK;
	if (!ok || flash_area_open(FIXED_PARTITION_ID(nnrt_fm_partition), &fa) != 0) {
		return false;
	}
	for (uint32_t b = off / eb * eb; ok && b < off + len; b += eb) {
		uint32_t lo = MAX(b, off), hi = MIN(b + eb, off + len);

		ok = flash_area_read(fa, b, block, eb) == 0;
		if (ok && flip) {
			for (uint32_t i = lo; i < hi; i++) {
				block[i - b] ^= 0x01u;
			}
		} else if (ok) {
			ok = flash_area_read(fa, src_off + (lo - off), block + (lo - b), hi - lo) == 0;
		}
		ok = ok && flash_area_erase(fa, b, eb) == 0 && flash_area_write(fa, b, block, eb) == 0;
	}
	flash_area_close(fa);
	return ok;
}
#else
/* SWAPNN_FM=disk: no attack on the disk (CMakeLists.txt builds it with SWAPNN_FM_TAMPER 0). */
static bool rewrite(uint32_t off, uint32_t len, bool flip, uint32_t src_off)
{
	ARG_UNUSED(off);
	ARG_UNUSED(len);
	ARG_UNUSED(flip);
	ARG_UNUSED(src_off);
	return false;
}
#endif

static nnrt_status_t attacker_write(nnrt_tiledev_t *dev, uint32_t offset, const void *src,
				    size_t len)
{
	nnrt_status_t st = real_dev->write(real_dev, offset, src, len);
	uint32_t n = writes++;

	ARG_UNUSED(dev);
	if (st != NNRT_OK) {
		return st;
	}
	if (n == 0u) {
		first_off = offset;
		first_len = (uint32_t)len;
	}
	if (SWAPNN_FM_TAMPER == TAMPER_BITFLIP && n == 0u) {
		if (!rewrite(offset + (uint32_t)len / 2u, 1u, true, 0u)) {
			return NNRT_ERR_IO;
		}
		printk("swapnn-fm: attack: one bit of tile write %u (%u B at 0x%x) flipped in "
		       "the flash\n", (unsigned int)n, (unsigned int)len, (unsigned int)offset);
	}
	if (SWAPNN_FM_TAMPER == TAMPER_STALE && n == PLAN(FM_TILES) && len == first_len) {
		if (!rewrite(offset, (uint32_t)len, false, first_off)) {
			return NNRT_ERR_IO;
		}
		printk("swapnn-fm: attack: tile write %u (0x%x) replaced by write 0's sealed "
		       "bytes from inference 1 (0x%x)\n", (unsigned int)n, (unsigned int)offset,
		       (unsigned int)first_off);
	}
	return NNRT_OK;
}

static nnrt_status_t attacker_read(nnrt_tiledev_t *dev, uint32_t offset, void *dst, size_t len)
{
	ARG_UNUSED(dev);
	return real_dev->read(real_dev, offset, dst, len);
}

/* ---- the application ------------------------------------------------------------ */

static bool attach_feature_maps(void)
{
	uint8_t key[FM_KEY_BYTES];
	uint8_t salt[4];
	nnrt_status_t st;

	if (nnrt_tiledev_port_open(&real_dev) != NNRT_OK) {
		printk("swapnn-fm: FAIL no tile device (partition nnrt_fm_partition)\n");
		return false;
	}
	attacker = *real_dev;
	attacker.write = attacker_write;
	attacker.read = attacker_read;
	if (psa_crypto_init() != PSA_SUCCESS || psa_generate_random(key, sizeof(key)) != PSA_SUCCESS
	    || psa_generate_random(salt, sizeof(salt)) != PSA_SUCCESS) {
		printk("swapnn-fm: FAIL no random key\n");
		return false;
	}
	st = MODEL_FM_ATTACH(&attacker, key, sizeof(key), FM_ALG, salt);
	memset(key, 0, sizeof(key)); /* the store holds it as a PSA key now */
	if (st != NNRT_OK) {
		printk("swapnn-fm: FAIL attaching the tile store (status %d)\n", (int)st);
		return false;
	}
#if defined(CONFIG_NNRT_SWAP_FM_FLASH_AREA)
	printk("swapnn-fm: tile partition %u B, erase block %u B, write block %u B\n",
	       (unsigned int)real_dev->size, (unsigned int)nnrt_tiledev_port_stats().erase_block,
	       (unsigned int)real_dev->unit);
#else
	printk("swapnn-fm: tile disk %s: %u B, sectors of %u B\n", CONFIG_NNRT_SWAP_FM_DISK_NAME,
	       (unsigned int)real_dev->size, (unsigned int)real_dev->unit);
#endif
	return true;
}

static void fill_input(int8_t *x, size_t n, uint32_t k)
{
	for (size_t i = 0; i < n; i++) {
		x[i] = (int8_t)((int)((i * 31u + k * 17u) % 251u) - 125);
	}
}

/* Run inference k (0-based) and check its output; 1: matches, 0: auth failure, -1: other. */
static int infer(uint32_t k)
{
	const nnrt_model_t *m = &MODEL_SYMBOL;
	uint32_t start, cycles;
	nnrt_status_t status;
	size_t diff = 0;
	const int8_t *y;

	fill_input(m->input(0), m->inputs[0].bytes, k);
	start = k_cycle_get_32();
	status = m->invoke();
	cycles = k_cycle_get_32() - start;
	if (status == NNRT_ERR_AUTH) {
		printk("swapnn-fm: AUTH FAIL inference %u: a feature-map tile did not "
		       "authenticate (modified or stale): inference stopped, no result\n",
		       (unsigned int)(k + 1u));
		return 0;
	}
	if (status != NNRT_OK) {
		printk("swapnn-fm: FAIL inference %u returned %d\n", (unsigned int)(k + 1u),
		       (int)status);
		return -1;
	}
	y = m->output(0);
	for (size_t i = 0; i < SWAPNN_FM_OUTPUT_BYTES; i++) {
		diff += y[i] != swapnn_fm_expected[k][i];
	}
	if (diff != 0u) {
		printk("swapnn-fm: FAIL inference %u: %u of %u output bytes differ from "
		       "tflite-micro\n", (unsigned int)(k + 1u), (unsigned int)diff,
		       (unsigned int)SWAPNN_FM_OUTPUT_BYTES);
		return -1;
	}
	printk("swapnn-fm: inference %u: output matches tflite-micro (%u B), %u cycles\n",
	       (unsigned int)(k + 1u), (unsigned int)SWAPNN_FM_OUTPUT_BYTES,
	       (unsigned int)cycles);
	return 1;
}

int main(void)
{
	const nnrt_model_t *m = &MODEL_SYMBOL;
	nnrt_tiledev_port_stats_t st;
	bool refused = false;
	int r;

	printk("swapnn-fm: model %s, %u ops, arena %u B for activations peaking at %u B, "
	       "%u feature-map tiles (%u B) out per inference\n", m->name,
	       (unsigned int)PLAN(OPS), (unsigned int)m->arena_bytes,
	       (unsigned int)PLAN(PEAK_BYTES), (unsigned int)PLAN(FM_TILES),
	       (unsigned int)PLAN(FM_BYTES));
	BUILD_ASSERT(SWAPNN_FM_OUTPUT_BYTES > 0, "no expected output");
	if (m->outputs[0].bytes != SWAPNN_FM_OUTPUT_BYTES || PLAN(FM_TILES) == 0u) {
		printk("swapnn-fm: FAIL the model is not the feature-map scenario's\n");
		return 0;
	}
	if (!attach_feature_maps()) {
		return 0;
	}
#if defined(SWAPNN_FM_STREAM)
	if (!attach_weights()) {
		return 0;
	}
#endif
	for (uint32_t k = 0; k < SWAPNN_FM_INFERENCES; k++) {
		r = infer(k);
		if (r < 0) {
			return 0;
		}
		if (r == 0) {
			if (SWAPNN_FM_TAMPER == 0 || refused) {
				return 0; /* no attack here, or a second failure */
			}
			refused = true;
		}
	}
	if (nnrt_tiledev_port_flush() != NNRT_OK) {
		printk("swapnn-fm: FAIL the last tile write did not complete\n");
		return 0;
	}
	st = nnrt_tiledev_port_stats();
	printk("swapnn-fm: %u tiles written (%u B), %u read (%u B), %u erases of %u B blocks\n",
	       (unsigned int)st.writes, (unsigned int)st.bytes_written, (unsigned int)st.reads,
	       (unsigned int)st.bytes_read, (unsigned int)st.erases,
	       (unsigned int)st.erase_block);
#if defined(CONFIG_NNRT_SWAP_FM_ASYNC)
	/* Double buffering: transfers the I/O thread ran while this thread went on, and how
	 * often (and how long) this thread still had to wait for one. */
	printk("swapnn-fm: async: %u writes behind, %u synchronous; %u reads served ahead "
	       "(%u B), %u synchronous; %u waits, %u cycles waiting\n",
	       (unsigned int)st.writes_behind, (unsigned int)st.sync_writes,
	       (unsigned int)st.reads_ahead, (unsigned int)st.bytes_read_ahead,
	       (unsigned int)st.sync_reads, (unsigned int)st.waits,
	       (unsigned int)st.wait_cycles);
#endif
#if defined(SWAPNN_FM_STREAM)
	printk("swapnn-fm: weights: %u chunks, %u B read from disk, %u cycles waiting\n",
	       (unsigned int)MODEL_SWAP_STATS().chunks,
	       (unsigned int)nnrt_extflash_port_stats().bytes,
	       (unsigned int)nnrt_extflash_port_stats().stall_cycles);
	if (MODEL_SWAP_STATS().chunks != (uint64_t)SWAPNN_FM_INFERENCES
					    * CAT(PLAN_PREFIX, _SWAP_CHUNKS)) {
		printk("swapnn-fm: FAIL not every weight chunk was streamed\n");
		return 0;
	}
#endif
	if (SWAPNN_FM_TAMPER != 0) {
		printk(refused ? "swapnn-fm: REFUSED the tampered tile; later inferences clean\n"
			       : "swapnn-fm: FAIL the tampered tile was not refused\n");
		return 0;
	}
	if (st.bytes_written <= real_dev->size) {
		printk("swapnn-fm: FAIL the ring did not wrap (%u B written)\n",
		       (unsigned int)st.bytes_written);
		return 0;
	}
	printk("swapnn-fm: PASS\n");
	return 0;
}
