/*
 * nnopt side of benchmarks/bench_zephyr.py: the model nnopt compiled at build time
 * (MODEL_SYMBOL, from nnopt_model_definitions()), driven by bench_run()
 * (../common/bench_io.c): the seeded inputs, invoke() timed, the outputs printed.
 */
#include <stddef.h>
#include <stdint.h>

#include "bench_io.h"
#include MODEL_HEADER

static void *input(void *ctx, uint32_t i, size_t *bytes)
{
	const nnrt_model_t *m = ctx;

	*bytes = m->inputs[i].bytes;
	return m->input(i);
}

static const void *output(void *ctx, uint32_t o, size_t *bytes)
{
	const nnrt_model_t *m = ctx;

	*bytes = m->outputs[o].bytes;
	return m->output(o);
}

static int invoke(void *ctx)
{
	const nnrt_model_t *m = ctx;

	return m->invoke() == NNRT_OK ? 0 : -1;
}

int main(void)
{
	const nnrt_model_t *m = &MODEL_SYMBOL;
	const struct bench_model bm = {
		.n_inputs = m->n_inputs,
		.n_outputs = m->n_outputs,
		.input = input,
		.output = output,
		.invoke = invoke,
		.ctx = (void *)m,
	};

	/* The kernels' argument checks, once, as TFLM's AllocateTensors runs Prepare. */
	if (m->prepare != NULL && m->prepare() != NNRT_OK) {
		bench_fail("prepare");
	}
	bench_run(&bm);
}
