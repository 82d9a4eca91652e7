/*
 * The generated header as documentation, used as documented: its per-I/O macros are
 * checked against the model's descriptors (nnrt/model.h), then input 0 is read from
 * stdin (INPUT0_BYTES bytes), the model runs (prepare -> input -> invoke -> output) and
 * output 0 is written to stdout in hex. Built by tests/test_header_doc.py with
 * -DMODEL_HEADER="<name>_model.h" -DMODEL=<name>_model -DUP=<NAME> and only the nnrt
 * sources the header lists (plus the host port).
 */
#include <stdio.h>
#include <string.h>

#include MODEL_HEADER

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define M(suffix) PASTE(UP, suffix)

static int fails;

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            printf("FAIL %s\n", #cond);                                           \
            fails++;                                                              \
        }                                                                         \
    } while (0)

static size_t product(const int *dims, size_t n)
{
    size_t p = 1;

    for (size_t i = 0; i < n; i++) {
        p *= (size_t)dims[i];
    }
    return p;
}

int main(void)
{
    const nnrt_model_t *m = &MODEL;
    const int in_shape[] = M(_INPUT0_SHAPE);
    const int out_shape[] = M(_OUTPUT0_SHAPE);
    static unsigned char data[M(_INPUT0_BYTES)];
    M(_INPUT0_TYPE) *in;
    const M(_OUTPUT0_TYPE) *out;

    EXPECT(M(_INPUTS) == m->n_inputs && M(_OUTPUTS) == m->n_outputs);
    EXPECT(M(_INPUT0_BYTES) == m->inputs[0].bytes);
    EXPECT(M(_OUTPUT0_BYTES) == m->outputs[0].bytes);
    EXPECT(M(_INPUT0_DIMS) == m->inputs[0].rank && M(_OUTPUT0_DIMS) == m->outputs[0].rank);
    EXPECT(sizeof(in_shape) / sizeof(in_shape[0]) == M(_INPUT0_DIMS));
    EXPECT(sizeof(out_shape) / sizeof(out_shape[0]) == M(_OUTPUT0_DIMS));
    for (size_t i = 0; i < M(_INPUT0_DIMS); i++) {
        EXPECT(in_shape[i] == m->inputs[0].dims[i]);
    }
    for (size_t i = 0; i < M(_OUTPUT0_DIMS); i++) {
        EXPECT(out_shape[i] == m->outputs[0].dims[i]);
    }
    EXPECT(sizeof(M(_INPUT0_TYPE)) * product(in_shape, M(_INPUT0_DIMS)) == M(_INPUT0_BYTES));
    EXPECT(sizeof(M(_OUTPUT0_TYPE)) * product(out_shape, M(_OUTPUT0_DIMS)) ==
           M(_OUTPUT0_BYTES));
#ifdef QUANTISED
    EXPECT(M(_INPUT0_SCALE) == m->inputs[0].scale);
    EXPECT(M(_INPUT0_ZERO_POINT) == m->inputs[0].zero_point);
    EXPECT(M(_OUTPUT0_SCALE) == m->outputs[0].scale);
    EXPECT(M(_OUTPUT0_ZERO_POINT) == m->outputs[0].zero_point);
#endif
    if (fread(data, 1, sizeof(data), stdin) != sizeof(data)) {
        printf("FAIL short input\n");
        return 1;
    }
    if (m->prepare != NULL && m->prepare() != NNRT_OK) {
        printf("FAIL prepare\n");
        return 1;
    }
    in = m->input(0);
    memcpy(in, data, M(_INPUT0_BYTES));
    if (m->invoke() != NNRT_OK) {
        printf("FAIL invoke\n");
        return 1;
    }
    out = m->output(0);
    printf("out ");
    for (size_t i = 0; i < M(_OUTPUT0_BYTES); i++) {
        printf("%02x", ((const unsigned char *)out)[i]);
    }
    printf("\n");
    return fails != 0;
}
