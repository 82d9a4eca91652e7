/*
 * nnopt hello: run hello_world_int8 (a 3-layer MLP trained on y = sin(x)), compiled
 * by nnopt at build time, on a few points of [0, 2*pi) and compare with sin(x).
 *
 * Prints one line per point and "hello: PASS" when every prediction is within
 * TOLERANCE_MILLI of the true value (the Twister console harness waits for it).
 */
#include <stdint.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include "hello_world_int8_model.h"
#include "hello_world_int8_plan.h"

/* The int8 model follows sin(x) to within about 0.07 at these points (nnopt host build). */
#define TOLERANCE_MILLI 250

/* x in milli-units and sin(x) in milli-units, for x = k * pi / 4. */
static const struct {
	int32_t x_milli;
	int32_t sin_milli;
} points[] = {
	{0, 0},        {785, 707},   {1571, 1000}, {2356, 707},
	{3142, 0},     {3927, -707}, {4712, -1000}, {5498, -707},
};

static int round_to_int(float v)
{
	return (int)(v >= 0.0f ? v + 0.5f : v - 0.5f);
}

static int8_t quantize(float v, const nnrt_tensor_desc_t *d)
{
	int q = round_to_int(v / d->scale) + (int)d->zero_point;

	return (int8_t)CLAMP(q, INT8_MIN, INT8_MAX);
}

static float dequantize(int8_t q, const nnrt_tensor_desc_t *d)
{
	return ((float)q - (float)d->zero_point) * d->scale;
}

int main(void)
{
	const nnrt_model_t *m = &hello_world_int8_model;
	const nnrt_tensor_desc_t *in_desc = &m->inputs[0];
	const nnrt_tensor_desc_t *out_desc = &m->outputs[0];
	int passed = 0;

	printk("hello: model %s, %u ops, arena %u B, weights %u B\n", m->name,
	       (unsigned int)HELLO_WORLD_INT8_PLAN_OPS, (unsigned int)m->arena_bytes,
	       (unsigned int)HELLO_WORLD_INT8_PLAN_WEIGHT_BYTES);

	if (m->n_inputs != 1 || m->n_outputs != 1 || in_desc->dtype != NNRT_INT8 ||
	    out_desc->dtype != NNRT_INT8) {
		printk("hello: FAIL unexpected model signature\n");
		return 0;
	}

	for (size_t i = 0; i < ARRAY_SIZE(points); i++) {
		int8_t *x = m->input(0);
		const int8_t *y;
		uint32_t start;
		uint32_t cycles;
		nnrt_status_t status;
		int y_milli;
		int err;

		if (x == NULL) {
			printk("hello: FAIL no input buffer\n");
			return 0;
		}
		*x = quantize((float)points[i].x_milli / 1000.0f, in_desc);
		start = k_cycle_get_32();
		status = m->invoke();
		cycles = k_cycle_get_32() - start;
		if (status != NNRT_OK) {
			printk("hello: FAIL invoke returned %d\n", (int)status);
			return 0;
		}
		y = m->output(0);
		y_milli = round_to_int(dequantize(*y, out_desc) * 1000.0f);
		err = y_milli - (int)points[i].sin_milli;
		if (err < 0) {
			err = -err;
		}
		passed += err <= TOLERANCE_MILLI;
		printk("hello: x=%d.%03d y=%d sin=%d (milli) err=%d cycles=%u\n",
		       (int)points[i].x_milli / 1000, (int)points[i].x_milli % 1000, y_milli,
		       (int)points[i].sin_milli, err, (unsigned int)cycles);
	}

	if (passed == (int)ARRAY_SIZE(points)) {
		printk("hello: PASS (%d/%d within 0.%03d)\n", passed, (int)ARRAY_SIZE(points),
		       TOLERANCE_MILLI);
	} else {
		printk("hello: FAIL (%d/%d within 0.%03d)\n", passed, (int)ARRAY_SIZE(points),
		       TOLERANCE_MILLI);
	}
	return 0;
}
