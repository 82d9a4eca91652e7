/*
 * Working memory of the dynamic allocator on Zephyr (nnrt/port_mem.h,
 * modules/nnrt/port/zephyr/nnrt_port_mem.c): both sources (CONFIG_NNRT_MEM_STATIC,
 * CONFIG_NNRT_MEM_KHEAP) honour the same contract. The defragmenting allocator itself
 * (issue 7) gets its suite here when it lands; it is portable C and is tested on the
 * host and bare-metal ports first.
 */
#include <stdint.h>
#include <string.h>

#include <zephyr/ztest.h>

#include "nnrt/port_mem.h"

#define CAPACITY ((size_t)CONFIG_NNRT_MEM_SIZE)

static void *held[4];

static void release_all(void *fixture)
{
	ARG_UNUSED(fixture);
	for (size_t i = 0; i < ARRAY_SIZE(held); i++) {
		nnrt_port_mem_release(held[i]);
		held[i] = NULL;
	}
}

ZTEST(nnrt_mem, test_capacity_is_the_configured_size)
{
	zassert_equal(nnrt_port_mem_capacity(), CAPACITY);
}

ZTEST(nnrt_mem, test_bad_arguments)
{
	void *mem = (void *)1;

	zassert_equal(nnrt_port_mem_acquire(16, 16, NULL), NNRT_ERR_ARG);
	zassert_equal(nnrt_port_mem_acquire(0, 16, &mem), NNRT_ERR_ARG);
	zassert_is_null(mem, "the output must be cleared on failure");
	zassert_equal(nnrt_port_mem_acquire(16, 0, &mem), NNRT_ERR_ARG);
	zassert_equal(nnrt_port_mem_acquire(16, 3, &mem), NNRT_ERR_ARG);
	nnrt_port_mem_release(NULL); /* ignored */
}

ZTEST(nnrt_mem, test_block_is_aligned_and_usable)
{
	uint8_t *p;

	zassert_equal(nnrt_port_mem_acquire(CAPACITY / 2, NNRT_ARENA_ALIGN, &held[0]), NNRT_OK);
	p = held[0];
	zassert_not_null(p);
	zassert_equal((uintptr_t)p % NNRT_ARENA_ALIGN, 0u, "block %p is not aligned", p);
	memset(p, 0xa5, CAPACITY / 2);
	zassert_equal(p[0], 0xa5);
	zassert_equal(p[CAPACITY / 2 - 1], 0xa5);
}

ZTEST(nnrt_mem, test_too_large_fails)
{
	zassert_equal(nnrt_port_mem_acquire(CAPACITY + 1, 8, &held[0]), NNRT_ERR_NOMEM);
	zassert_is_null(held[0]);
}

ZTEST(nnrt_mem, test_release_makes_memory_available_again)
{
	for (int round = 0; round < 3; round++) {
		zassert_equal(nnrt_port_mem_acquire(CAPACITY / 2, 8, &held[0]), NNRT_OK,
			      "round %d", round);
		nnrt_port_mem_release(held[0]);
		held[0] = NULL;
	}
}

ZTEST(nnrt_mem, test_concurrent_owners)
{
	zassert_equal(nnrt_port_mem_acquire(1024, 8, &held[0]), NNRT_OK);
#if defined(CONFIG_NNRT_MEM_STATIC)
	/* One static buffer, one owner: a second request fails until the first returns. */
	zassert_equal(nnrt_port_mem_acquire(1024, 8, &held[1]), NNRT_ERR_NOMEM);
	nnrt_port_mem_release(held[0]);
	held[0] = NULL;
	zassert_equal(nnrt_port_mem_acquire(1024, 8, &held[1]), NNRT_OK);
#else
	/* A k_heap serves several owners with disjoint blocks. */
	zassert_equal(nnrt_port_mem_acquire(1024, 8, &held[1]), NNRT_OK);
	zassert_true((uint8_t *)held[1] >= (uint8_t *)held[0] + 1024 ||
		     (uint8_t *)held[0] >= (uint8_t *)held[1] + 1024, "blocks overlap");
#endif
}

ZTEST_SUITE(nnrt_mem, NULL, NULL, NULL, release_all, NULL);
