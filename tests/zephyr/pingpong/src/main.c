/*
 * The ping-pong runtime on LeNet-5: what the plan promises (pools fused, an arena
 * smaller than the unfused peak) holds in the generated code, and the model computes
 * the same outputs as the host build, repeatably, even after another input.
 */
#include <string.h>

#include <zephyr/ztest.h>

#include "nnrt_test_model.h"

#include MODEL_HEADER
#include PLAN_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define PLAN(field) CAT(PLAN_PREFIX, CAT(_PLAN_, field))

static const nnrt_model_t *const model = &MODEL_SYMBOL;

ZTEST(nnrt_pingpong, test_pools_are_fused)
{
	/* LeNet-5 has two max-pools, each after a convolution. */
	zassert_equal(PLAN(FUSED_OPS), 2u, "expected both max-pools fused");
}

ZTEST(nnrt_pingpong, test_arena_below_unfused_peak)
{
	zassert_equal(model->arena_bytes, PLAN(ARENA_BYTES));
	zassert_true(model->arena_bytes < PLAN(PEAK_UNFUSED_BYTES),
		     "arena %u B is not below the unfused peak %u B",
		     (unsigned int)model->arena_bytes, (unsigned int)PLAN(PEAK_UNFUSED_BYTES));
}

ZTEST(nnrt_pingpong, test_outputs_match_host_build)
{
	nnrt_test_load_inputs(model);
	zassert_equal(model->invoke(), NNRT_OK);
	nnrt_test_check_outputs(model);
}

ZTEST(nnrt_pingpong, test_no_state_between_inferences)
{
	/* A different input first (every byte 0x3c), then the vectors again. */
	for (uint32_t i = 0; i < model->n_inputs; i++) {
		memset(model->input(i), 0x3c, model->inputs[i].bytes);
	}
	zassert_equal(model->invoke(), NNRT_OK);
	nnrt_test_load_inputs(model);
	zassert_equal(model->invoke(), NNRT_OK);
	nnrt_test_check_outputs(model);
}

ZTEST_SUITE(nnrt_pingpong, NULL, NULL, NULL, NULL, NULL);
