/*
 * The reset of a stateful generated model (tests/ops/test_sequence.py): invoke, invoke,
 * invoke, reset, invoke. Prints "reset-equal" when the output after the reset is the
 * first invocation's again, and "carried-differs" when the third differs from the first
 * (the state was carried). Built with the model generated as "svdf8" in its directory.
 */
#include <stdio.h>
#include <string.h>
#include "svdf8_model.h"

static void fill(void)
{
    const nnrt_model_t *m = &svdf8_model;
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        int8_t *p = (int8_t *)m->input(i);
        for (size_t k = 0; k < m->inputs[i].bytes; k++) {
            p[k] = (int8_t)(k * 37u + i * 11u);
        }
    }
}

int main(void)
{
    const nnrt_model_t *m = &svdf8_model;
    int8_t first[16], third[16];
    size_t n = m->outputs[0].bytes;

    fill();
    if (m->invoke() != NNRT_OK) return 1;
    memcpy(first, m->output(0), n);
    fill();
    if (m->invoke() != NNRT_OK) return 1;
    fill();
    if (m->invoke() != NNRT_OK) return 1;
    memcpy(third, m->output(0), n);
    if (m->reset == NULL || m->reset() != NNRT_OK) return 2;
    fill();
    if (m->invoke() != NNRT_OK) return 1;
    puts(memcmp(first, m->output(0), n) == 0 ? "reset-equal" : "reset-differs");
    puts(memcmp(first, third, n) == 0 ? "carried-equal" : "carried-differs");
    return 0;
}
