/*
 * nnopt swapnn: a model whose weights (3.5 MB for MobileNetV2 224x224 int8) exceed the
 * board's internal flash. The compiler writes them as a blob of sealed chunks for the
 * external flash; the generated code streams them through the swap driver
 * (modules/nnrt/src/swap) into two staging buffers, the next chunk loading while the
 * current one computes, and authenticates every chunk before a kernel uses it.
 *
 * The application opens the external flash (the port's nnrt_extflash_port_open(); with
 * SWAPNN_WEIGHTS=disk a disk_access disk, CONFIG_NNRT_SWAP_SOURCE_DISK) and
 * attaches it to the model (<name>_swap_attach(), generated: checks the blob's header,
 * layout id and chunk table, imports the key compiled into the model). It first checks
 * the blob's magic number so that a board whose blob was never written says so.
 */
#include <stdbool.h>
#include <stdint.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/byteorder.h>
#include <zephyr/sys/printk.h>

#include "nnrt/extflash.h"
#include "nnrt/swap.h"

#include MODEL_HEADER
#include PLAN_HEADER
/* The tflite-micro interpreter's output for this input (weights_expected.py, at build time). */
#include "swapnn_expected.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define PLAN(field) CAT(PLAN_PREFIX, CAT(_PLAN_, field))
/* <NAME>_SWAP_CHUNKS of the generated model header (scripts/nnopt/swap/codegen.py). */
#define SWAP_CHUNKS CAT(PLAN_PREFIX, _SWAP_CHUNKS)

nnrt_status_t MODEL_SWAP_ATTACH(nnrt_extflash_t *dev);
nnrt_swap_stats_t MODEL_SWAP_STATS(void);

/* Open the external flash, check there is a blob, attach it to the model. */
static bool attach_weights(void)
{
	nnrt_extflash_t *dev = NULL;
	uint8_t head[16] __aligned(4);
	nnrt_status_t status;

	/* NULL: the devicetree's external flash (alias nnrt-weights). */
	status = nnrt_extflash_port_open(NULL, &dev);
	if (status != NNRT_OK) {
		printk("swapnn: FAIL no external flash (status %d)\n", (int)status);
		return false;
	}
#if defined(CONFIG_NNRT_SWAP_SOURCE_DISK)
	/* SWAPNN_WEIGHTS=disk: the blob on a disk_access disk (weights_disk.overlay). */
	printk("swapnn: weight disk %s holds %u B from sector %u\n", CONFIG_NNRT_SWAP_DISK_NAME,
	       (unsigned int)dev->size, (unsigned int)CONFIG_NNRT_SWAP_DISK_FIRST_SECTOR);
#else
	printk("swapnn: external flash holds %u B\n", (unsigned int)dev->size);
#endif
	status = dev->read_start(dev, 0, sizeof(head), head);
	if (status == NNRT_OK) {
		status = dev->read_wait(dev);
	}
	if (status != NNRT_OK) {
		printk("swapnn: FAIL cannot read the external flash (status %d)\n", (int)status);
		return false;
	}
	if (sys_get_le32(head) != NNRT_SWAP_MAGIC) {
		printk("swapnn: FAIL no weight blob in the external flash: write %s first "
		       "(samples/swapnn/README.md)\n", SWAPNN_BLOB_NAME);
		return false;
	}
	status = MODEL_SWAP_ATTACH(dev);
	if (status != NNRT_OK) {
		/* NNRT_ERR_FORMAT: a blob for another model or build (layout id). */
		printk("swapnn: FAIL the blob does not belong to this firmware (status %d)\n",
		       (int)status);
		return false;
	}
	return true;
}

int main(void)
{
	const nnrt_model_t *m = &MODEL_SYMBOL;
	const nnrt_tensor_desc_t *in_desc = &m->inputs[0];
	const nnrt_tensor_desc_t *out_desc = &m->outputs[0];
	int8_t *x;
	const int8_t *y;
	uint32_t start;
	uint32_t cycles;
	nnrt_status_t status;
	size_t diff = 0;
	int best = 0;

	printk("swapnn: model %s, %u ops, arena %u B, weights %u B\n", m->name,
	       (unsigned int)PLAN(OPS), (unsigned int)m->arena_bytes,
	       (unsigned int)PLAN(WEIGHT_BYTES));
	if (!attach_weights()) {
		return 0;
	}
	if (in_desc->dtype != NNRT_INT8 || out_desc->dtype != NNRT_INT8) {
		printk("swapnn: FAIL unexpected model signature\n");
		return 0;
	}
	x = m->input(0);
	if (x == NULL) {
		printk("swapnn: FAIL no input buffer\n");
		return 0;
	}
	for (size_t i = 0; i < in_desc->bytes; i++) {
		x[i] = (int8_t)((int)((i * 31u) % 251u) - 125);
	}

	start = k_cycle_get_32();
	status = m->invoke();
	cycles = k_cycle_get_32() - start;
	if (status == NNRT_ERR_AUTH) {
		/* The driver counts only chunks that authenticated (nnrt_swap_stats_t.chunks)
		 * and stops at the first that does not: no kernel ran on its bytes, and the
		 * output is not read.
		 */
		printk("swapnn: AUTH FAIL chunk %u of %u did not authenticate (a modified blob "
		       "or a wrong key): inference stopped, no result\n",
		       (unsigned int)MODEL_SWAP_STATS().chunks, (unsigned int)SWAP_CHUNKS);
		return 0;
	}
	if (status != NNRT_OK) {
		printk("swapnn: FAIL invoke returned %d\n", (int)status);
		return 0;
	}
	if (MODEL_SWAP_STATS().chunks != SWAP_CHUNKS) {
		printk("swapnn: FAIL %u of %u chunks authenticated\n",
		       (unsigned int)MODEL_SWAP_STATS().chunks, (unsigned int)SWAP_CHUNKS);
		return 0;
	}
	y = m->output(0);
	if (out_desc->bytes != SWAPNN_OUTPUT_BYTES) {
		printk("swapnn: FAIL output of %u B, tflite-micro's has %u B\n",
		       (unsigned int)out_desc->bytes, (unsigned int)SWAPNN_OUTPUT_BYTES);
		return 0;
	}
	for (size_t i = 0; i < SWAPNN_OUTPUT_BYTES; i++) {
		diff += y[i] != swapnn_expected[i];
	}
	if (diff != 0u) {
		printk("swapnn: FAIL %u of %u output bytes differ from tflite-micro\n",
		       (unsigned int)diff, (unsigned int)SWAPNN_OUTPUT_BYTES);
		return 0;
	}
	printk("swapnn: output matches tflite-micro (%u B)\n", (unsigned int)SWAPNN_OUTPUT_BYTES);
	for (size_t i = 1; i < out_desc->bytes; i++) {
		if (y[i] > y[best]) {
			best = (int)i;
		}
	}
	printk("swapnn: class %d (score %d), %u cycles\n", best, (int)y[best],
	       (unsigned int)cycles);
	printk("swapnn: %u chunks, %u B read, %u cycles waiting for flash\n",
	       (unsigned int)MODEL_SWAP_STATS().chunks,
	       (unsigned int)nnrt_extflash_port_stats().bytes,
	       (unsigned int)nnrt_extflash_port_stats().stall_cycles);
	printk("swapnn: PASS\n");
	return 0;
}
