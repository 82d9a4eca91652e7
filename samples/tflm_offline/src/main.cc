// nnopt tflm_offline: TensorFlow Lite Micro runs swiftnet_like twice: the original
// .tflite in an arena of SWIFTNET_LIKE_TFLM_ARENA_BYTES_BEFORE, then the .tflite nnopt
// wrote (operators in nnopt's order, TFLM's OfflineMemoryAllocation metadata holding
// nnopt's offsets) in SWIFTNET_LIKE_TFLM_ARENA_BYTES; both figures are nnopt's
// measurement (swiftnet_like_tflm.h, written at build time by nnopt_add_tflm_model).
// The same input goes to both; "tflm_offline: PASS" when the outputs are identical and
// the nnopt model used no more of its arena than the original.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <zephyr/kernel.h>
#include <zephyr/linker/section_tags.h>
#include <zephyr/sys/printk.h>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

#include "swiftnet_like_tflm.h"

namespace {

// Static arenas, uninitialised (__noinit: include/zephyr/linker/section_tags.h),
// 16-byte aligned as TFLM wants them (__aligned: include/zephyr/toolchain/gcc.h).
__noinit __aligned(16) uint8_t arena_original[SWIFTNET_LIKE_TFLM_ARENA_BYTES_BEFORE];
__noinit __aligned(16) uint8_t arena_nnopt[SWIFTNET_LIKE_TFLM_ARENA_BYTES];

constexpr size_t kMaxOutput = 64;

struct Result {
	bool ok;
	size_t arena_used;
	size_t bytes;
	uint8_t out[kMaxOutput];
};

// The operators swiftnet_like uses (TFLM's MicroMutableOpResolver: one Add* each).
TfLiteStatus add_ops(tflite::MicroMutableOpResolver<8> &r)
{
	TfLiteStatus s = r.AddAdd();

	s = s == kTfLiteOk ? r.AddAveragePool2D() : s;
	s = s == kTfLiteOk ? r.AddConcatenation() : s;
	s = s == kTfLiteOk ? r.AddConv2D() : s;
	s = s == kTfLiteOk ? r.AddFullyConnected() : s;
	s = s == kTfLiteOk ? r.AddMaxPool2D() : s;
	s = s == kTfLiteOk ? r.AddMean() : s;
	return s == kTfLiteOk ? r.AddSoftmax() : s;
}

// Input bytes from a fixed generator (the LCG of examples/plain_common/run_model.c).
void fill(uint8_t *x, size_t n)
{
	uint32_t state = 12345u;

	for (size_t i = 0; i < n; i++) {
		state = state * 1664525u + 1013904223u;
		x[i] = static_cast<uint8_t>(state >> 24);
	}
}

Result run(const char *what, const unsigned char *data, uint8_t *arena, size_t arena_bytes)
{
	Result res = {};
	const tflite::Model *model = tflite::GetModel(data);
	static tflite::MicroMutableOpResolver<8> resolver;
	static bool resolver_ready;

	if (model->version() != TFLITE_SCHEMA_VERSION) {
		printk("tflm_offline: FAIL %s: schema version\n", what);
		return res;
	}
	if (!resolver_ready) {
		if (add_ops(resolver) != kTfLiteOk) {
			printk("tflm_offline: FAIL resolver\n");
			return res;
		}
		resolver_ready = true;
	}
	tflite::MicroInterpreter interpreter(model, resolver, arena, arena_bytes);

	if (interpreter.AllocateTensors() != kTfLiteOk) {
		printk("tflm_offline: FAIL %s: AllocateTensors in %u B\n", what,
		       static_cast<unsigned int>(arena_bytes));
		return res;
	}
	TfLiteTensor *in = interpreter.input(0);

	fill(in->data.uint8, in->bytes);
	if (interpreter.Invoke() != kTfLiteOk) {
		printk("tflm_offline: FAIL %s: Invoke\n", what);
		return res;
	}
	TfLiteTensor *out = interpreter.output(0);

	res.bytes = out->bytes < kMaxOutput ? out->bytes : kMaxOutput;
	memcpy(res.out, out->data.uint8, res.bytes);
	res.arena_used = interpreter.arena_used_bytes();
	res.ok = true;
	printk("tflm_offline: %s arena %u B, used %u B\n", what,
	       static_cast<unsigned int>(arena_bytes), static_cast<unsigned int>(res.arena_used));
	return res;
}

}  // namespace

int main(void)
{
	Result before = run("original", swiftnet_like_tflm_original, arena_original,
			    sizeof(arena_original));
	Result after = run("nnopt", swiftnet_like_tflm_model, arena_nnopt, sizeof(arena_nnopt));

	if (!before.ok || !after.ok) {
		return 0;
	}
	printk("tflm_offline: output ");
	for (size_t i = 0; i < after.bytes; i++) {
		printk("%02x", after.out[i]);
	}
	printk("\n");
	if (before.bytes != after.bytes || memcmp(before.out, after.out, after.bytes) != 0) {
		printk("tflm_offline: FAIL outputs differ\n");
	} else if (after.arena_used > before.arena_used) {
		printk("tflm_offline: FAIL nnopt's model uses more arena\n");
	} else {
		printk("tflm_offline: PASS (arena used %u -> %u B, nnopt model %s)\n",
		       static_cast<unsigned int>(before.arena_used),
		       static_cast<unsigned int>(after.arena_used),
		       SWIFTNET_LIKE_TFLM_NNOPT ? "written" : "not written: the original");
	}
	return 0;
}
