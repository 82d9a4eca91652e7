/*
 * nnopt reorder: swiftnet_like is built from cells with parallel branches. The order
 * of its operators in the .tflite file keeps more tensors alive at once than needed;
 * nnopt searches the order that minimises the peak of live memory and plans the arena
 * for it. This sample prints both peaks (from swiftnet_like_plan.h, written at build
 * time from the plan) and runs one inference in the planned order.
 */
#include <stdint.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include "swiftnet_like_model.h"
#include "swiftnet_like_plan.h"

BUILD_ASSERT(SWIFTNET_LIKE_PLAN_ARENA_BYTES == SWIFTNET_LIKE_ARENA_BYTES,
	     "the plan header and the generated model disagree");

/* A deterministic test image: diagonal stripes, different in each channel. */
static void fill_input(int8_t *x, const nnrt_tensor_desc_t *d)
{
	int32_t h = d->dims[1];
	int32_t w = d->dims[2];
	int32_t c = d->dims[3];

	for (int32_t i = 0; i < h; i++) {
		for (int32_t j = 0; j < w; j++) {
			for (int32_t k = 0; k < c; k++) {
				int v = ((i + j + 7 * k) % 32) * 8 - 128;

				x[(i * w + j) * c + k] = (int8_t)v;
			}
		}
	}
}

int main(void)
{
	const nnrt_model_t *m = &swiftnet_like_model;
	const nnrt_tensor_desc_t *in_desc = &m->inputs[0];
	const nnrt_tensor_desc_t *out_desc = &m->outputs[0];
	uint32_t shipped = SWIFTNET_LIKE_PLAN_PEAK_FILE_ORDER_BYTES;
	uint32_t planned = SWIFTNET_LIKE_PLAN_PEAK_BYTES;
	int8_t *x;
	const int8_t *y;
	uint32_t start;
	uint32_t cycles;
	nnrt_status_t status;
	int best = 0;

	printk("reorder: model %s, %u ops, order %s\n", m->name,
	       (unsigned int)SWIFTNET_LIKE_PLAN_OPS,
	       SWIFTNET_LIKE_PLAN_ORDER_OPTIMAL ? "proven optimal" : "heuristic");
	printk("reorder: peak as shipped %u B, planned order %u B (saves %u B)\n",
	       (unsigned int)shipped, (unsigned int)planned,
	       (unsigned int)(shipped > planned ? shipped - planned : 0u));
	printk("reorder: arena %u B (%s), lower bound %u B\n", (unsigned int)m->arena_bytes,
	       SWIFTNET_LIKE_PLAN_ARENA_STRATEGY,
	       (unsigned int)SWIFTNET_LIKE_PLAN_LOWER_BOUND_BYTES);

	if (in_desc->dtype != NNRT_INT8 || in_desc->rank != 4 || out_desc->dtype != NNRT_INT8) {
		printk("reorder: FAIL unexpected model signature\n");
		return 0;
	}
	x = m->input(0);
	if (x == NULL) {
		printk("reorder: FAIL no input buffer\n");
		return 0;
	}
	fill_input(x, in_desc);

	start = k_cycle_get_32();
	status = m->invoke();
	cycles = k_cycle_get_32() - start;
	if (status != NNRT_OK) {
		printk("reorder: FAIL invoke returned %d\n", (int)status);
		return 0;
	}
	y = m->output(0);
	for (int i = 1; i < (int)out_desc->bytes; i++) {
		if (y[i] > y[best]) {
			best = i;
		}
	}
	printk("reorder: class %d (score %d), %u cycles\n", best, (int)y[best],
	       (unsigned int)cycles);

	if (planned < shipped) {
		printk("reorder: PASS\n");
	} else {
		printk("reorder: FAIL the planned order saves nothing\n");
	}
	return 0;
}
