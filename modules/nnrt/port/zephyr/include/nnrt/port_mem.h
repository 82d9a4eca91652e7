/**
 * @file port_mem.h
 * @brief Working memory of the defragmenting dynamic allocator (platform service).
 *
 * The defragmenting allocator (issue 7, CONFIG_NNRT_ALLOCATOR_DYNAMIC) places the
 * tensors of models loaded at run time inside one block of working memory that the
 * platform provides through this interface. The Zephyr port implements it
 * (modules/nnrt/port/zephyr/nnrt_port_mem.c: a static buffer or a k_heap); the
 * bare-metal and host ports will implement the same contract, at which point this
 * header moves to include/nnrt/ next to port.h.
 *
 * Nothing here allocates behind the caller's back, and no call blocks.
 */
#ifndef NNRT_PORT_MEM_H_
#define NNRT_PORT_MEM_H_

#include <stddef.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Obtain a block of working memory.
 *
 * Zephyr: CONFIG_NNRT_MEM_STATIC hands out one static buffer of CONFIG_NNRT_MEM_SIZE
 * bytes to one owner at a time; CONFIG_NNRT_MEM_KHEAP allocates from a k_heap of that
 * size (several owners, per-block overhead).
 *
 * @param bytes  bytes needed, > 0
 * @param align  alignment in bytes: a power of two (at most NNRT_ARENA_ALIGN for the
 *               static buffer)
 * @param mem    receives the block; set to NULL on failure
 * @return NNRT_OK; NNRT_ERR_ARG for a zero size, a bad alignment or a NULL @p mem;
 *         NNRT_ERR_NOMEM when the memory is taken or too small.
 */
nnrt_status_t nnrt_port_mem_acquire(size_t bytes, size_t align, void **mem);

/**
 * Give a block back. NULL is ignored.
 * @param mem a block returned by nnrt_port_mem_acquire()
 */
void nnrt_port_mem_release(void *mem);

/**
 * @return the size of the working memory in bytes: an upper bound of what one
 *         nnrt_port_mem_acquire() can return.
 */
size_t nnrt_port_mem_capacity(void);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_PORT_MEM_H_ */
