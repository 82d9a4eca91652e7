/*
 * Generic harness for one compiled model, the same file on host and bare metal.
 *
 * Build with -DNNRT_HARNESS_MODEL=<symbol> (e.g. vww_96_int8_model) and link with the
 * generated model; add -DNNRT_TRACE to record every intermediate tensor.
 *
 *   runner [-n K] -i IN0 [-i IN1 ...] [-o OUT0 ...] [-t TRACE] [-s STATS] [-b BLOB]
 *
 *   -n K      K invocations in sequence (default 1), the model's state (variable
 *             tensors) carried from one to the next: each -i file then holds K whole
 *             tensors back to back (invocation k reads the k-th), each -o file
 *             receives the K outputs back to back
 *   -b FILE   models with streamed weights (a non-NULL `attach`): the weight blob,
 *             opened as the port's external flash (nnrt_extflash_port_open) and
 *             attached before the inputs are read; prints "nnrt: swap_reads=N
 *             swap_bytes=N swap_stall=N" (the device's counters) after invoke()
 *   -i FILE   one per model input, in order; each exactly desc.bytes long
 *   -o FILE   one per model output, in order (or none: outputs are not written)
 *   -t FILE   (NNRT_TRACE builds) records `uint32 tensor, uint32 bytes, data`
 *             (little endian) for every tensor the model traces
 *   -s FILE   writes {"status": S, "instructions": N|null, "stack_bytes": N|null}
 *
 * Instructions are counted around invoke() only (trace writes excluded) and printed
 * as "nnrt: instructions=N" when the port counts instructions (QEMU): the first
 * invocation's; with -n K > 1 also "nnrt: instructions_total=N" over all K.
 *
 * Exit codes (the step that failed; a message is printed on stderr):
 *   0 ok, 2 usage, 3 input unreadable, 4 input size mismatch, 5 invoke() failed,
 *   6 output not written, 7 trace not written, 8 stats not written,
 *   9 model gave no buffer for an input/output, 10 the weight blob could not be
 *   opened or attached (the status is printed: NNRT_ERR_FORMAT, NNRT_ERR_IO ...),
 *   11 the model's prepare() (its kernels' argument checks) failed (status printed).
 *   The bare-metal port adds 100 (CPU fault), 101 (stack overflow), 102 (command line).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/extflash.h"
#include "nnrt/model.h"
#include "nnrt/port.h"

#ifndef NNRT_HARNESS_MODEL
#error "define NNRT_HARNESS_MODEL to the model's symbol, e.g. -DNNRT_HARNESS_MODEL=vww_96_int8_model"
#endif

extern const nnrt_model_t NNRT_HARNESS_MODEL;

#ifdef NNRT_HARNESS_INPUT_WRITER
/* A model whose graph input lives in storage (input(i) is NULL): the generated
 * `<name>_input_write`, fed the file through a small buffer (nnrt/fmstore.h). */
nnrt_status_t NNRT_HARNESS_INPUT_WRITER(uint32_t i, const void *data, size_t len);
#define INPUT_PIECE 4096u
static uint8_t g_input_piece[INPUT_PIECE];
#endif

#define EXIT_OK 0
#define EXIT_USAGE 2
#define EXIT_INPUT_READ 3
#define EXIT_INPUT_SIZE 4
#define EXIT_INVOKE 5
#define EXIT_OUTPUT_WRITE 6
#define EXIT_TRACE 7
#define EXIT_STATS 8
#define EXIT_MODEL 9
#define EXIT_BLOB 10
#define EXIT_PREPARE 11

#ifndef NNRT_HARNESS_MAX_IO
#define NNRT_HARNESS_MAX_IO 16
#endif

/* ---- a line of text without printf ---------------------------------------- */
typedef struct {
    char buf[256];
    size_t len;
} text_t;

static void t_reset(text_t *t)
{
    t->len = 0;
    t->buf[0] = '\0';
}

static void t_str(text_t *t, const char *s)
{
    if (s == NULL) {
        s = "(null)";
    }
    while (*s != '\0' && t->len + 1 < sizeof(t->buf)) {
        t->buf[t->len++] = *s++;
    }
    t->buf[t->len] = '\0';
}

static void t_u64(text_t *t, uint64_t v)
{
    char digits[21];
    size_t n = 0;

    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (n > 0 && t->len + 1 < sizeof(t->buf)) {
        t->buf[t->len++] = digits[--n];
    }
    t->buf[t->len] = '\0';
}

static void t_i32(text_t *t, int32_t v)
{
    if (v < 0) {
        t_str(t, "-");
        t_u64(t, (uint64_t)(-(int64_t)v));
    } else {
        t_u64(t, (uint64_t)v);
    }
}

static const char *status_name(nnrt_status_t s)
{
    switch (s) {
    case NNRT_OK:
        return "NNRT_OK";
    case NNRT_ERR_ARG:
        return "NNRT_ERR_ARG";
    case NNRT_ERR_UNSUPPORTED:
        return "NNRT_ERR_UNSUPPORTED";
    case NNRT_ERR_IO:
        return "NNRT_ERR_IO";
    case NNRT_ERR_AUTH:
        return "NNRT_ERR_AUTH";
    case NNRT_ERR_FORMAT:
        return "NNRT_ERR_FORMAT";
    case NNRT_ERR_NOMEM:
        return "NNRT_ERR_NOMEM";
    case NNRT_ERR_CRYPTO:
        return "NNRT_ERR_CRYPTO";
    case NNRT_ERR_INTERNAL:
        return "NNRT_ERR_INTERNAL";
    default:
        return "unknown status";
    }
}

static int fail(int code, const char *what, const char *detail)
{
    text_t t;

    t_reset(&t);
    t_str(&t, "nnrt harness: ");
    t_str(&t, what);
    if (detail != NULL) {
        t_str(&t, detail);
    }
    nnrt_port_log_error(t.buf);
    return code;
}

/* ---- tracing --------------------------------------------------------------- */
static const char *trace_path;
static int trace_failed;
static uint64_t trace_counter; /* counter ticks spent writing the trace */

#ifdef NNRT_TRACE
void nnrt_trace_tensor(uint32_t tensor, const void *data, size_t bytes)
{
    uint8_t header[8];
    uint64_t t0;
    unsigned i;

    if (trace_path == NULL || trace_failed) {
        return;
    }
    t0 = nnrt_port_counter();
    for (i = 0; i < 4; i++) {
        header[i] = (uint8_t)(tensor >> (8 * i));
        header[4 + i] = (uint8_t)((uint32_t)bytes >> (8 * i));
    }
    if (nnrt_port_write_file(trace_path, header, sizeof(header), 1) != NNRT_OK ||
        nnrt_port_write_file(trace_path, data, bytes, 1) != NNRT_OK) {
        trace_failed = 1;
    }
    trace_counter += nnrt_port_counter() - t0;
}
#endif

/* ---- stats ----------------------------------------------------------------- */
static int write_stats(const char *path, nnrt_status_t status, int have_count,
                       uint64_t instructions, size_t stack)
{
    text_t t;

    t_reset(&t);
    t_str(&t, "{\"status\": ");
    t_i32(&t, (int32_t)status);
    t_str(&t, ", \"instructions\": ");
    if (have_count) {
        t_u64(&t, instructions);
    } else {
        t_str(&t, "null");
    }
    t_str(&t, ", \"stack_bytes\": ");
    if (stack != 0) {
        t_u64(&t, stack);
    } else {
        t_str(&t, "null");
    }
    t_str(&t, "}\n");
    return nnrt_port_write_file(path, t.buf, t.len, 0) == NNRT_OK ? 0 : -1;
}

static int usage(const char *problem)
{
    (void)fail(EXIT_USAGE, problem, NULL);
    nnrt_port_log_error("usage: runner [-n K] -i IN [-i IN ...] [-o OUT ...] [-t TRACE] [-s STATS] [-r N] [-b BLOB]");
    return EXIT_USAGE;
}

/* -b BLOB: open the weight blob as the external flash and attach it to the model. */
static int attach_blob(const nnrt_model_t *hm, const char *path, nnrt_extflash_t **dev)
{
    nnrt_status_t st;
    text_t t;

    if (hm->attach == NULL) {
        return usage("-b: this model streams no weights");
    }
    st = nnrt_extflash_port_open(path, dev);
    if (st == NNRT_OK) {
        st = hm->attach(*dev);
    }
    if (st != NNRT_OK) {
        t_reset(&t);
        t_str(&t, "weight blob ");
        t_str(&t, path);
        t_str(&t, ": attach failed with status ");
        t_i32(&t, (int32_t)st);
        t_str(&t, " (");
        t_str(&t, status_name(st));
        t_str(&t, ")");
        nnrt_extflash_port_close();
        return fail(EXIT_BLOB, t.buf, NULL);
    }
    return EXIT_OK;
}

static void log_blob_stats(void)
{
    const nnrt_extflash_stats_t f = nnrt_extflash_port_stats();
    text_t t;

    t_reset(&t);
    t_str(&t, "nnrt: swap_reads=");
    t_u64(&t, f.reads);
    t_str(&t, " swap_bytes=");
    t_u64(&t, f.bytes);
    t_str(&t, " swap_stall=");
    t_u64(&t, f.stall_cycles);
    nnrt_port_log(t.buf);
}

/* The inputs of invocation `k` of `n`: the k-th tensor of each input file. */
static int read_inputs(const nnrt_model_t *hm, const char *const *inputs, uint32_t k,
                       uint32_t n)
{
    uint32_t i;
    text_t t;

    for (i = 0; i < hm->n_inputs; i++) {
        const nnrt_tensor_desc_t *d = &hm->inputs[i];
        void *dst = hm->input(i);
        size_t actual = 0;
        nnrt_status_t st = NNRT_OK;

        t_reset(&t);
        t_str(&t, "input ");
        t_u64(&t, i);
        t_str(&t, " (");
        t_str(&t, d->name);
        t_str(&t, "): ");
#ifdef NNRT_HARNESS_INPUT_WRITER
        if (dst == NULL && d->bytes != 0) {
            /* stored input: the file in pieces, each sealed by the model as it fills */
            for (size_t done = 0; done < d->bytes; done += INPUT_PIECE) {
                const size_t piece = d->bytes - done < INPUT_PIECE ? d->bytes - done
                                                                   : INPUT_PIECE;

                st = nnrt_port_read_file_at(inputs[i], (size_t)k * d->bytes + done,
                                            g_input_piece, piece, (size_t)n * d->bytes,
                                            &actual);
                if (st != NNRT_OK) {
                    break;
                }
                st = NNRT_HARNESS_INPUT_WRITER(i, g_input_piece, piece);
                if (st != NNRT_OK) {
                    return fail(EXIT_MODEL, t.buf, "the model refused the input's bytes");
                }
            }
        } else
#endif
        if (dst == NULL && d->bytes != 0) {
            return fail(EXIT_MODEL, t.buf, "the model gave no buffer");
        } else if (n == 1) {
            st = nnrt_port_read_file(inputs[i], dst, d->bytes, &actual);
        } else {
            st = nnrt_port_read_file_at(inputs[i], (size_t)k * d->bytes, dst, d->bytes,
                                        (size_t)n * d->bytes, &actual);
        }
        if (st == NNRT_ERR_FORMAT) {
            t_str(&t, "file ");
            t_str(&t, inputs[i]);
            t_str(&t, " has ");
            t_u64(&t, actual);
            t_str(&t, " bytes, the model expects ");
            t_u64(&t, (uint64_t)n * d->bytes);
            return fail(EXIT_INPUT_SIZE, t.buf, NULL);
        }
        if (st != NNRT_OK) {
            t_str(&t, "cannot read ");
            return fail(EXIT_INPUT_READ, t.buf, inputs[i]);
        }
    }
    return EXIT_OK;
}

/* The outputs of invocation `k`: the first creates each file, the others append. */
static int write_outputs(const nnrt_model_t *hm, const char *const *outputs, uint32_t k)
{
    uint32_t i;
    text_t t;

    for (i = 0; i < hm->n_outputs; i++) {
        const nnrt_tensor_desc_t *d = &hm->outputs[i];
        const void *src = hm->output(i);

        t_reset(&t);
        t_str(&t, "output ");
        t_u64(&t, i);
        t_str(&t, " (");
        t_str(&t, d->name);
        t_str(&t, "): ");
        if (src == NULL && d->bytes != 0) {
            return fail(EXIT_MODEL, t.buf, "the model gave no buffer");
        }
        if (nnrt_port_write_file(outputs[i], src, d->bytes, k > 0) != NNRT_OK) {
            t_str(&t, "cannot write ");
            return fail(EXIT_OUTPUT_WRITE, t.buf, outputs[i]);
        }
    }
    return EXIT_OK;
}

/* A count for -n or -r: decimal digits, at most 100000000. */
static int parse_count(const char *digits, uint32_t *out)
{
    uint32_t v = 0;

    if (*digits == '\0') {
        return -1;
    }
    for (; *digits != '\0'; digits++) {
        if (*digits < '0' || *digits > '9' || v > 100000000u) {
            return -1;
        }
        v = v * 10u + (uint32_t)(*digits - '0');
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const nnrt_model_t *hm = &NNRT_HARNESS_MODEL;
    const char *inputs[NNRT_HARNESS_MAX_IO];
    const char *outputs[NNRT_HARNESS_MAX_IO];
    const char *stats_path = NULL;
    const char *blob_path = NULL;
    nnrt_extflash_t *dev = NULL;
    uint32_t repeat = 0;
    uint32_t invocations = 1;
    uint32_t n_in = 0;
    uint32_t n_out = 0;
    uint32_t k;
    int a;
    int rc;
    uint64_t t0;
    uint64_t t1;
    uint64_t instructions = 0;
    uint64_t total = 0;
    int have_count;
    nnrt_status_t status = NNRT_OK;
    text_t t;

    for (a = 1; a < argc; a++) {
        const char *opt = argv[a];

        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            nnrt_port_log("usage: runner [-n K] -i IN [-i IN ...] [-o OUT ...] [-t TRACE] [-s STATS] [-r N] [-b BLOB]");
            return EXIT_OK;
        }
        if (a + 1 >= argc || (strcmp(opt, "-i") != 0 && strcmp(opt, "-o") != 0 &&
                              strcmp(opt, "-t") != 0 && strcmp(opt, "-s") != 0 &&
                              strcmp(opt, "-r") != 0 && strcmp(opt, "-b") != 0 &&
                              strcmp(opt, "-n") != 0)) {
            t_reset(&t);
            t_str(&t, "bad argument: ");
            t_str(&t, opt);
            return usage(t.buf);
        }
        if (opt[1] == 'i') {
            if (n_in == NNRT_HARNESS_MAX_IO) {
                return usage("too many -i");
            }
            inputs[n_in++] = argv[++a];
        } else if (opt[1] == 'o') {
            if (n_out == NNRT_HARNESS_MAX_IO) {
                return usage("too many -o");
            }
            outputs[n_out++] = argv[++a];
        } else if (opt[1] == 'r') {
            if (parse_count(argv[++a], &repeat) != 0) {
                return usage("-r takes a count of extra invocations to time");
            }
        } else if (opt[1] == 'n') {
            if (parse_count(argv[++a], &invocations) != 0 || invocations < 1) {
                return usage("-n takes a count of invocations, at least 1");
            }
        } else if (opt[1] == 'b') {
            blob_path = argv[++a];
        } else if (opt[1] == 't') {
#ifdef NNRT_TRACE
            trace_path = argv[++a];
#else
            return usage("-t needs a harness built with -DNNRT_TRACE");
#endif
        } else {
            stats_path = argv[++a];
        }
    }
    if (n_in != hm->n_inputs || (n_out != 0 && n_out != hm->n_outputs)) {
        t_reset(&t);
        t_str(&t, "model ");
        t_str(&t, hm->name);
        t_str(&t, " has ");
        t_u64(&t, hm->n_inputs);
        t_str(&t, " input(s) and ");
        t_u64(&t, hm->n_outputs);
        t_str(&t, " output(s); got ");
        t_u64(&t, n_in);
        t_str(&t, " -i and ");
        t_u64(&t, n_out);
        t_str(&t, " -o");
        return usage(t.buf);
    }

    if (blob_path != NULL) {
        rc = attach_blob(hm, blob_path, &dev);
        if (rc != EXIT_OK) {
            return rc;
        }
    }

    /* The kernels' argument checks, once before the first inference (not counted). */
    if (hm->prepare != NULL) {
        status = hm->prepare();
        if (status != NNRT_OK) {
            t_reset(&t);
            t_str(&t, "prepare() failed with status ");
            t_i32(&t, (int32_t)status);
            t_str(&t, " (");
            t_str(&t, status_name(status));
            t_str(&t, ")");
            return fail(EXIT_PREPARE, t.buf, NULL);
        }
    }

    rc = read_inputs(hm, inputs, 0, invocations);
    if (rc != EXIT_OK) {
        return rc;
    }
    if (trace_path != NULL && nnrt_port_write_file(trace_path, NULL, 0, 0) != NNRT_OK) {
        return fail(EXIT_TRACE, "cannot create the trace file ", trace_path);
    }
    have_count = nnrt_port_counter_unit() != NULL &&
                 strcmp(nnrt_port_counter_unit(), "instructions") == 0;

    for (k = 0; k < invocations; k++) {
        uint64_t trace_before = trace_counter;

        if (k > 0) {
            rc = read_inputs(hm, inputs, k, invocations);
            if (rc != EXIT_OK) {
                return rc;
            }
        }
        t0 = nnrt_port_counter();
        status = hm->invoke();
        t1 = nnrt_port_counter();
        if (k == 0) {
            instructions = t1 - t0 - (trace_counter - trace_before);
        }
        total += t1 - t0 - (trace_counter - trace_before);
        if (status != NNRT_OK) {
            break;
        }
        if (n_out != 0) {
            rc = write_outputs(hm, outputs, k);
            if (rc != EXIT_OK) {
                return rc;
            }
        }
    }

    if (have_count) {
        t_reset(&t);
        t_str(&t, "nnrt: instructions=");
        t_u64(&t, instructions);
        nnrt_port_log(t.buf);
        if (invocations > 1) {
            t_reset(&t);
            t_str(&t, "nnrt: instructions_total=");
            t_u64(&t, total);
            nnrt_port_log(t.buf);
        }
    }
    if (repeat > 0 && status == NNRT_OK && nnrt_port_counter_unit() != NULL) {
        /* -r N: N more inferences, timed together; the average goes to the log */
        uint32_t r;

        t0 = nnrt_port_counter();
        for (r = 0; r < repeat && status == NNRT_OK; r++) {
            status = hm->invoke();
        }
        t1 = nnrt_port_counter();
        t_reset(&t);
        t_str(&t, "nnrt: ");
        t_str(&t, nnrt_port_counter_unit());
        t_str(&t, "_per_invoke=");
        t_u64(&t, (t1 - t0) / repeat);
        nnrt_port_log(t.buf);
    }
    if (dev != NULL) {
        log_blob_stats();
    }
    if (nnrt_port_stack_used() != 0) {
        t_reset(&t);
        t_str(&t, "nnrt: stack_used=");
        t_u64(&t, nnrt_port_stack_used());
        nnrt_port_log(t.buf);
    }
    if (stats_path != NULL &&
        write_stats(stats_path, status, have_count, instructions, nnrt_port_stack_used()) != 0) {
        return fail(EXIT_STATS, "cannot write the stats file ", stats_path);
    }
    if (status != NNRT_OK) {
        t_reset(&t);
        t_str(&t, "invoke() failed with status ");
        t_i32(&t, (int32_t)status);
        t_str(&t, " (");
        t_str(&t, status_name(status));
        t_str(&t, ")");
        return fail(EXIT_INVOKE, t.buf, NULL);
    }
    if (trace_failed) {
        return fail(EXIT_TRACE, "writing the trace file failed: ", trace_path);
    }
    return EXIT_OK;
}
