/*
 * Helpers shared by the compiled-model suites: load the vector inputs into a model,
 * compare its outputs with the expected ones. Header-only (static functions) so that
 * each suite stays a single translation unit plus the generated model.
 */
#ifndef NNRT_TEST_MODEL_H_
#define NNRT_TEST_MODEL_H_

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/ztest.h>

#include "nnrt/model.h"
#include "nnrt_test_vectors.h"

/* float32 outputs: |got - want| <= NNRT_TEST_FLOAT_ATOL + NNRT_TEST_FLOAT_RTOL * |want| */
#define NNRT_TEST_FLOAT_ATOL 1e-5f
#define NNRT_TEST_FLOAT_RTOL 1e-4f

/* Copy the vector inputs into the model's input buffers. */
static inline void nnrt_test_load_inputs(const nnrt_model_t *m)
{
	zassert_equal(m->n_inputs, VEC_N_INPUTS, "model has %u inputs, vectors %u",
		      (unsigned int)m->n_inputs, (unsigned int)VEC_N_INPUTS);
	for (uint32_t i = 0; i < m->n_inputs; i++) {
		void *dst = m->input(i);

		zassert_not_null(dst, "no buffer for input %u", (unsigned int)i);
		zassert_equal(m->inputs[i].bytes, vec_input_bytes[i], "input %u size",
			      (unsigned int)i);
		memcpy(dst, vec_inputs[i], vec_input_bytes[i]);
	}
}

static inline float nnrt_test_abs(float v)
{
	return v < 0.0f ? -v : v;
}

static inline bool nnrt_test_float_close(float got, float want)
{
	return nnrt_test_abs(got - want) <=
	       NNRT_TEST_FLOAT_ATOL + NNRT_TEST_FLOAT_RTOL * nnrt_test_abs(want);
}

/* Check every output against the vectors: bit-exact for integer outputs. */
static inline void nnrt_test_check_outputs(const nnrt_model_t *m)
{
	zassert_equal(m->n_outputs, VEC_N_OUTPUTS, "model has %u outputs, vectors %u",
		      (unsigned int)m->n_outputs, (unsigned int)VEC_N_OUTPUTS);
	for (uint32_t i = 0; i < m->n_outputs; i++) {
		const uint8_t *got = m->output(i);

		zassert_not_null(got, "no buffer for output %u", (unsigned int)i);
		zassert_equal(m->outputs[i].bytes, vec_expected_bytes[i], "output %u size",
			      (unsigned int)i);
		if (!vec_expected_float[i]) {
			zassert_mem_equal(got, vec_expected[i], vec_expected_bytes[i],
					  "output %u differs from the host run", (unsigned int)i);
			continue;
		}
		for (size_t k = 0; k < vec_expected_bytes[i] / sizeof(float); k++) {
			float g;
			float w;

			memcpy(&g, got + k * sizeof(float), sizeof(float));
			memcpy(&w, vec_expected[i] + k * sizeof(float), sizeof(float));
			zassert_true(nnrt_test_float_close(g, w),
				     "output %u[%u]: %d vs %d (in millionths)", (unsigned int)i,
				     (unsigned int)k, (int)(g * 1e6f), (int)(w * 1e6f));
		}
	}
}

#endif /* NNRT_TEST_MODEL_H_ */
