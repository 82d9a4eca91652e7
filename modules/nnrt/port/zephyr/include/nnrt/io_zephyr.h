/**
 * @file io_zephyr.h
 * @brief The port's I/O thread on Zephyr: one work queue for every storage transfer.
 *
 * The swap driver's chunk reads (nnrt_extflash_zephyr.c: flash device, flash partition,
 * disk) and the feature-map tile device's writes behind and reads ahead
 * (nnrt_tiledev_zephyr.c, CONFIG_NNRT_SWAP_FM_ASYNC) are k_work items on this one queue
 * (include/zephyr/kernel.h: k_work_queue_start(), k_work_submit_to_queue()), so they run
 * one at a time, in the order they were submitted, never two drivers at once, while
 * the inference thread computes. Port-internal: not for applications.
 */
#ifndef NNRT_IO_ZEPHYR_H_
#define NNRT_IO_ZEPHYR_H_

#include <zephyr/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The I/O work queue, started on first use (thread "nnrt_io", priority
 *  CONFIG_NNRT_SWAP_IO_PRIORITY, stack CONFIG_NNRT_SWAP_IO_STACK_SIZE). */
struct k_work_q *nnrt_io_queue(void);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_IO_ZEPHYR_H_ */
