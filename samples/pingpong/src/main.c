/*
 * nnopt pingpong: LeNet-5 in the layout of Unlu 2020. nnopt folds each max-pool into
 * the convolution that feeds it (the pooled result is written in place, so the full
 * convolution output never exists) and lays the arena out so that consecutive
 * activations alternate between its two ends. Weights are const data in flash.
 *
 * The same file runs lenet5_float, lenet5_int8 and the ONNX export lenet5_b_qdq
 * (CMakeLists.txt passes the generated names as MODEL_SYMBOL, MODEL_HEADER,
 * PLAN_HEADER and PLAN_PREFIX).
 */
#include <stdint.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include MODEL_HEADER
#include PLAN_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
/* PLAN(ARENA_BYTES) -> LENET5_FLOAT_PLAN_ARENA_BYTES */
#define PLAN(field) CAT(PLAN_PREFIX, CAT(_PLAN_, field))

/* A "1": a vertical stroke with a short diagonal at the top, on a 32x32 canvas. */
static float pixel(int32_t i, int32_t j)
{
	if (j >= 15 && j <= 17 && i >= 4 && i <= 27) {
		return 1.0f;
	}
	if (i >= 4 && i <= 9 && j == 14 - (i - 4)) {
		return 1.0f;
	}
	return 0.0f;
}

static int fill_input(const nnrt_model_t *m)
{
	const nnrt_tensor_desc_t *d = &m->inputs[0];
	void *buf = m->input(0);
	int32_t h;
	int32_t w;

	/* One channel: NHWC [1, H, W, 1] (TFLite) and NCHW [1, 1, H, W] (ONNX, whose
	 * layout nnopt keeps at the inputs) hold the pixels in the same order.
	 */
	if (buf == NULL || d->rank != 4) {
		return -1;
	}
	if (d->dims[3] == 1) {
		h = d->dims[1];
		w = d->dims[2];
	} else if (d->dims[1] == 1) {
		h = d->dims[2];
		w = d->dims[3];
	} else {
		return -1;
	}
	for (int32_t i = 0; i < h; i++) {
		for (int32_t j = 0; j < w; j++) {
			float v = pixel(i, j);

			if (d->dtype == NNRT_FLOAT32) {
				((float *)buf)[i * w + j] = v;
			} else if (d->dtype == NNRT_INT8) {
				int q = (int)(v / d->scale + 0.5f) + (int)d->zero_point;

				((int8_t *)buf)[i * w + j] = (int8_t)CLAMP(q, INT8_MIN, INT8_MAX);
			} else {
				return -1;
			}
		}
	}
	return 0;
}

/* Index of the largest output score, or -1 for an unexpected output type. */
static int argmax(const nnrt_model_t *m)
{
	const nnrt_tensor_desc_t *d = &m->outputs[0];
	const void *buf = m->output(0);
	int n = (int)d->dims[d->rank - 1];
	int best = 0;

	if (buf == NULL) {
		return -1;
	}
	for (int i = 1; i < n; i++) {
		if (d->dtype == NNRT_FLOAT32) {
			if (((const float *)buf)[i] > ((const float *)buf)[best]) {
				best = i;
			}
		} else if (d->dtype == NNRT_INT8) {
			if (((const int8_t *)buf)[i] > ((const int8_t *)buf)[best]) {
				best = i;
			}
		} else {
			return -1;
		}
	}
	return best;
}

int main(void)
{
	const nnrt_model_t *m = &MODEL_SYMBOL;
	uint32_t start;
	uint32_t cycles;
	nnrt_status_t status;
	int first;
	int second;

	printk("pingpong: model %s, %u ops, %u pools fused into convolutions\n", m->name,
	       (unsigned int)PLAN(OPS), (unsigned int)PLAN(FUSED_OPS));
	printk("pingpong: arena %u B, unfused peak %u B, weights %u B in flash\n",
	       (unsigned int)m->arena_bytes, (unsigned int)PLAN(PEAK_UNFUSED_BYTES),
	       (unsigned int)PLAN(WEIGHT_BYTES));

	if (fill_input(m) != 0) {
		printk("pingpong: FAIL unexpected input tensor\n");
		return 0;
	}
	start = k_cycle_get_32();
	status = m->invoke();
	cycles = k_cycle_get_32() - start;
	if (status != NNRT_OK) {
		printk("pingpong: FAIL invoke returned %d\n", (int)status);
		return 0;
	}
	first = argmax(m);

	/* Run again on the same input: the ping-pong buffers hold no state between runs. */
	if (fill_input(m) != 0 || m->invoke() != NNRT_OK) {
		printk("pingpong: FAIL second inference\n");
		return 0;
	}
	second = argmax(m);
	printk("pingpong: class %d, %u cycles per inference\n", first, (unsigned int)cycles);

	if (first >= 0 && first == second && m->arena_bytes < PLAN(PEAK_UNFUSED_BYTES)) {
		printk("pingpong: PASS\n");
	} else {
		printk("pingpong: FAIL (classes %d/%d, arena %u B)\n", first, second,
		       (unsigned int)m->arena_bytes);
	}
	return 0;
}
