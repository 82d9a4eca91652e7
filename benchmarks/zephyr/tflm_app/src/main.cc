// TFLM side of benchmarks/bench_zephyr.py: the model (tflm_model_data.c) run by
// TensorFlow Lite Micro, driven by bench_run() (../common/bench_io.c): the seeded
// inputs, Invoke() timed, the outputs printed. Also printed: "bench: arena_used=N",
// MicroInterpreter::arena_used_bytes() after AllocateTensors.
#include <cstddef>
#include <cstdint>

#include <zephyr/toolchain.h>
#include <zephyr/linker/section_tags.h>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

#include "bench_io.h"
#include "tflm_model.h"

extern "C" const unsigned char bench_tflm_model[];

namespace {

// The static arena, uninitialized like nnopt's (__noinit,
// include/zephyr/linker/section_tags.h; __aligned, include/zephyr/toolchain/gcc.h).
__noinit __aligned(16) uint8_t arena[BENCH_TFLM_ARENA_BYTES];

void *input(void *ctx, uint32_t i, size_t *bytes)
{
	TfLiteTensor *t = static_cast<tflite::MicroInterpreter *>(ctx)->input(i);

	*bytes = t->bytes;
	return t->data.raw;
}

const void *output(void *ctx, uint32_t o, size_t *bytes)
{
	TfLiteTensor *t = static_cast<tflite::MicroInterpreter *>(ctx)->output(o);

	*bytes = t->bytes;
	return t->data.raw;
}

int invoke(void *ctx)
{
	return static_cast<tflite::MicroInterpreter *>(ctx)->Invoke() == kTfLiteOk ? 0 : -1;
}

}  // namespace

int main(void)
{
	const tflite::Model *model = tflite::GetModel(bench_tflm_model);

	if (model->version() != TFLITE_SCHEMA_VERSION) {
		bench_fail("model schema version");
	}
	tflite::MicroMutableOpResolver<BENCH_TFLM_N_OPS> resolver;
	const char *failed = bench_tflm_add_ops(resolver);

	if (failed != nullptr) {
		bench_fail(failed);
	}
	tflite::MicroAllocator *allocator = tflite::MicroAllocator::Create(arena, sizeof arena);

	if (allocator == nullptr) {
		bench_fail("AllocateTensors (MicroAllocator::Create)");
	}
	tflite::MicroResourceVariables *variables = nullptr;

	if (BENCH_TFLM_RESOURCE_VARIABLES > 0) {
		variables = tflite::MicroResourceVariables::Create(allocator,
								   BENCH_TFLM_RESOURCE_VARIABLES);
		if (variables == nullptr) {
			bench_fail("AllocateTensors (MicroResourceVariables::Create)");
		}
	}
	tflite::MicroInterpreter interpreter(model, resolver, allocator, variables);

	if (interpreter.AllocateTensors() != kTfLiteOk) {
		bench_fail("AllocateTensors");
	}
	bench_log_value("arena_used", interpreter.arena_used_bytes());

	const bench_model bm = {
		static_cast<uint32_t>(interpreter.inputs_size()),
		static_cast<uint32_t>(interpreter.outputs_size()),
		input,
		output,
		invoke,
		&interpreter,
	};
	bench_run(&bm);
}
