/*
 * End-to-end test of one compiled model (testcase.yaml picks it): the generated code,
 * the nnrt kernels and the Zephyr port together, on the target.
 */
#include <zephyr/ztest.h>

#include "nnrt_test_model.h"

#include MODEL_HEADER
#include PLAN_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define PLAN(field) CAT(PLAN_PREFIX, CAT(_PLAN_, field))

static const nnrt_model_t *const model = &MODEL_SYMBOL;

ZTEST(nnrt_model, test_descriptor_matches_plan)
{
	zassert_equal(model->arena_bytes, PLAN(ARENA_BYTES),
		      "the model's arena differs from its plan");
	zassert_true(model->n_inputs > 0 && model->n_outputs > 0);
	zassert_not_null(model->invoke);
}

ZTEST(nnrt_model, test_prepare_accepts_the_parameters)
{
	/* The kernels' argument checks on the generated parameters, before any inference. */
	zassert_not_null(model->prepare);
	zassert_equal(model->prepare(), NNRT_OK, "prepare failed");
}

ZTEST(nnrt_model, test_outputs_match_host_build)
{
	nnrt_test_load_inputs(model);
	zassert_equal(model->invoke(), NNRT_OK, "invoke failed");
	nnrt_test_check_outputs(model);
}

ZTEST(nnrt_model, test_second_inference_is_identical)
{
	/* The arena is reused between inferences: nothing may leak from one to the next. */
	nnrt_test_load_inputs(model);
	zassert_equal(model->invoke(), NNRT_OK, "first invoke failed");
	nnrt_test_load_inputs(model);
	zassert_equal(model->invoke(), NNRT_OK, "second invoke failed");
	nnrt_test_check_outputs(model);
}

ZTEST_SUITE(nnrt_model, NULL, NULL, NULL, NULL, NULL);
