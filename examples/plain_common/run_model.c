/*
 * Run one generated model without Zephyr, as its header documents it: prepare ->
 * input -> invoke -> output. Built by examples/plain_cmake (CMake package) and
 * examples/plain_make (Makefile fragment) for the host or as bare-metal firmware
 * (QEMU, semihosting console), with
 *   -DMODEL_HEADER="<name>_model.h" -DMODEL=<name>_model -DUP=<NAME>
 *
 * Input 0 is filled from a fixed generator (the LCG x = 1664525 x + 1013904223 from
 * x = 12345, one step per input byte, its top byte taken; for float inputs one step
 * per element, (top byte - 128) / 64); output 0 is printed in hex, so a test can
 * compare it with the tflite-micro interpreter on the same input.
 */
#include <stdint.h>
#include <string.h>

#include "nnrt/port.h"
#include MODEL_HEADER

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define M(suffix) PASTE(UP, suffix)

typedef M(_INPUT0_TYPE) input_t;

static uint32_t lcg_state = 12345u;

static uint8_t lcg_byte(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (uint8_t)(lcg_state >> 24);
}

static void fill_input(void *data)
{
    if ((input_t)0.5f != 0) { /* a floating-point input */
        input_t *x = data;

        for (size_t i = 0; i < M(_INPUT0_BYTES) / sizeof(input_t); i++) {
            x[i] = (input_t)(((int)lcg_byte() - 128) / 64.0f);
        }
    } else {
        uint8_t *x = data;

        for (size_t i = 0; i < M(_INPUT0_BYTES); i++) {
            x[i] = lcg_byte();
        }
    }
}

int main(void)
{
    const nnrt_model_t *m = &MODEL;
    static char line[16 + 2 * M(_OUTPUT0_BYTES)];
    const uint8_t *out;
    size_t n;
    void *in;

    if (m->prepare != NULL && m->prepare() != NNRT_OK) {
        nnrt_port_log("run_model: FAIL prepare");
        return 1;
    }
    in = m->input(0);
    if (in == NULL) {
        nnrt_port_log("run_model: FAIL no input");
        return 1;
    }
    fill_input(in);
    if (m->invoke() != NNRT_OK) {
        nnrt_port_log("run_model: FAIL invoke");
        return 1;
    }
    out = m->output(0);
    /* hex by hand: printf would pull the C library's stdio (and its system calls) into
     * bare-metal firmware */
    memcpy(line, "output0 ", 8);
    n = 8;
    for (size_t i = 0; i < M(_OUTPUT0_BYTES); i++) {
        line[n++] = "0123456789abcdef"[out[i] >> 4];
        line[n++] = "0123456789abcdef"[out[i] & 15];
    }
    line[n] = '\0';
    nnrt_port_log(line);
    nnrt_port_log("run_model: done");
    return 0;
}
