/*
 * A hand-written stand-in for a generated model, for the harness tests
 * (tests/test_firmware.py): two int8 [1,8] inputs, one int8 [1,8] output,
 *   t2 = sat(in0 + bias)      (traced as tensor 2)
 *   out = sat(t2 + in1)       (traced as tensor 3)
 * invoke() returns NNRT_ERR_ARG when in0[0] == -128 (to test the failure path).
 * Buffers live in an NNRT_ARENA array, the bias in NNRT_WEIGHTS.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/model.h"
#include "nnrt/sections.h"

#define N 8

static int8_t arena[4 * N] NNRT_ARENA;
static const int8_t bias[N] NNRT_WEIGHTS = {1, 2, 3, 4, -1, -2, -3, -4};

static const nnrt_tensor_desc_t inputs[2] = {
    {"in0", NNRT_INT8, 2, {1, N}, 0.5f, 0, N},
    {"in1", NNRT_INT8, 2, {1, N}, 0.5f, 0, N},
};
static const nnrt_tensor_desc_t outputs[1] = {
    {"out", NNRT_INT8, 2, {1, N}, 0.5f, 0, N},
};

static int8_t sat8(int v)
{
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

static void *fake_input(uint32_t i)
{
    return i < 2 ? (void *)&arena[i * N] : NULL;
}

static void *fake_output(uint32_t i)
{
    return i == 0 ? (void *)&arena[3 * N] : NULL;
}

static nnrt_status_t fake_invoke(void)
{
    int8_t *in0 = &arena[0];
    int8_t *in1 = &arena[N];
    int8_t *t2 = &arena[2 * N];
    int8_t *out = &arena[3 * N];
    int i;

    if (in0[0] == -128) {
        return NNRT_ERR_ARG;
    }
    for (i = 0; i < N; i++) {
        t2[i] = sat8(in0[i] + bias[i]);
    }
#ifdef NNRT_TRACE
    nnrt_trace_tensor(2, t2, N);
#endif
    for (i = 0; i < N; i++) {
        out[i] = sat8(t2[i] + in1[i]);
    }
#ifdef NNRT_TRACE
    nnrt_trace_tensor(3, out, N);
#endif
    return NNRT_OK;
}

const nnrt_model_t fake_model = {
    "fake", 2, 1, inputs, outputs, sizeof(arena), fake_input, fake_output, fake_invoke,
    NULL, NULL, NULL,
};
