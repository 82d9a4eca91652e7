/*
 * Working memory of the dynamic allocator (nnrt/port_mem.h), CONFIG_NNRT_ALLOCATOR_DYNAMIC.
 *
 * CONFIG_NNRT_MEM_STATIC: one .noinit buffer (optionally in DTCM), one owner at a time.
 * CONFIG_NNRT_MEM_KHEAP:  a k_heap (K_HEAP_DEFINE, include/zephyr/kernel.h), any number
 *                         of owners; k_heap_aligned_alloc() with K_NO_WAIT so that an
 *                         exhausted heap fails at once instead of blocking inference.
 */
#include <zephyr/kernel.h>
#include <zephyr/linker/section_tags.h>
#include <zephyr/sys/util.h>

#include "nnrt/port_mem.h"

/* Alignments are checked with IS_POWER_OF_TWO() (include/zephyr/sys/util.h), which takes
 * any integer width (Zephyr's is_power_of_two() there takes unsigned int).
 */

#if defined(CONFIG_NNRT_MEM_STATIC)

#if defined(CONFIG_NNRT_MEM_IN_DTCM)
#define NNRT_MEM_SECTION __dtcm_noinit_section
#else
#define NNRT_MEM_SECTION __noinit
#endif

static uint8_t nnrt_mem[CONFIG_NNRT_MEM_SIZE] NNRT_MEM_SECTION __aligned(NNRT_ARENA_ALIGN);
static atomic_t nnrt_mem_taken;

nnrt_status_t nnrt_port_mem_acquire(size_t bytes, size_t align, void **mem)
{
	if (mem == NULL) {
		return NNRT_ERR_ARG;
	}
	*mem = NULL;
	if (bytes == 0 || !IS_POWER_OF_TWO(align) || align > NNRT_ARENA_ALIGN) {
		return NNRT_ERR_ARG;
	}
	if (bytes > sizeof(nnrt_mem)) {
		return NNRT_ERR_NOMEM;
	}
	if (!atomic_cas(&nnrt_mem_taken, 0, 1)) {
		return NNRT_ERR_NOMEM;
	}
	*mem = nnrt_mem;
	return NNRT_OK;
}

void nnrt_port_mem_release(void *mem)
{
	if (mem == nnrt_mem) {
		atomic_set(&nnrt_mem_taken, 0);
	}
}

size_t nnrt_port_mem_capacity(void)
{
	return sizeof(nnrt_mem);
}

#elif defined(CONFIG_NNRT_MEM_KHEAP)

K_HEAP_DEFINE(nnrt_heap, CONFIG_NNRT_MEM_SIZE);

nnrt_status_t nnrt_port_mem_acquire(size_t bytes, size_t align, void **mem)
{
	if (mem == NULL) {
		return NNRT_ERR_ARG;
	}
	*mem = NULL;
	if (bytes == 0 || !IS_POWER_OF_TWO(align)) {
		return NNRT_ERR_ARG;
	}
	*mem = k_heap_aligned_alloc(&nnrt_heap, align, bytes, K_NO_WAIT);
	return *mem != NULL ? NNRT_OK : NNRT_ERR_NOMEM;
}

void nnrt_port_mem_release(void *mem)
{
	if (mem != NULL) {
		k_heap_free(&nnrt_heap, mem);
	}
}

size_t nnrt_port_mem_capacity(void)
{
	return CONFIG_NNRT_MEM_SIZE;
}

#else
#error "CONFIG_NNRT_ALLOCATOR_DYNAMIC needs CONFIG_NNRT_MEM_STATIC or CONFIG_NNRT_MEM_KHEAP"
#endif
