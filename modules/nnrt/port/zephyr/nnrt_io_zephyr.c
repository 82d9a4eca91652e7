/*
 * The port's I/O work queue (include/nnrt/io_zephyr.h), CONFIG_NNRT_SWAP_IO: one thread
 * for the swap driver's reads and the feature-map tile device's asynchronous transfers
 * (k_work_queue_init(), k_work_queue_start(): include/zephyr/kernel.h).
 */
#include <stdbool.h>

#include <zephyr/kernel.h>

#include "nnrt/io_zephyr.h"

K_THREAD_STACK_DEFINE(nnrt_io_stack, CONFIG_NNRT_SWAP_IO_STACK_SIZE);
static struct k_work_q nnrt_io_q;
static bool io_started;

struct k_work_q *nnrt_io_queue(void)
{
	/* The inference thread opens the devices that use it, one at a time. */
	if (!io_started) {
		const struct k_work_queue_config cfg = {.name = "nnrt_io"};

		k_work_queue_init(&nnrt_io_q);
		k_work_queue_start(&nnrt_io_q, nnrt_io_stack, K_THREAD_STACK_SIZEOF(nnrt_io_stack),
				   CONFIG_NNRT_SWAP_IO_PRIORITY, &cfg);
		io_started = true;
	}
	return &nnrt_io_q;
}
