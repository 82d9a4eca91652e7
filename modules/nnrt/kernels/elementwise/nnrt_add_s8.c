/*
 * int8 ADD with broadcasting, TFLM reference arithmetic.
 * Each input is offset, shifted left by left_shift and rescaled by its own multiplier;
 * the sum is rescaled to the output, offset and clamped to the activation range.
 * The three rescalings (all shifts <= 0) run in the exact one-multiply form of
 * internal/requant.h (nnrt_rq_nonpos()) when the multipliers are >= 0, as TFLM's
 * QuantizeMultiplier makes them; else TFLM's two steps. Large outputs look the two
 * input rescalings up in per-call tables of the 256 int8 values (add_tabled()).
 * The output is walked in row-major order through the build-time broadcast descriptor;
 * each element is written after its inputs are read, so output may alias a same-sized
 * input (in place).
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"
#include "nnrt/kernels/quant.h"
#include "../cmsis/nnrt_cmsis.h"
#include "../internal/requant.h"
#include "../internal/binary.h"
#include "../internal/binary_quant.h"
#include "../internal/mve_add.h"

/* TFLM's two steps, for multipliers the fast form does not take (negative). */
NNRT_ADD_SUB_S8_APPLY(apply_ref, NNRT_COLD NNRT_NOINLINE, +)

/* Outputs at least this large take the tabled loop: its 2 x 256 rescalings per call cost
 * what about 30 elements' per-element rescalings do. */
#define NNRT_ADD_TABLE_MIN_ELEMENTS 512

static int32_t output_elements(const nnrt_broadcast_t *b)
{
    int32_t total = 1;
    for (int32_t d = 0; d < b->rank; ++d) {
        total *= b->dims[d];
    }
    return total;
}

/*
 * The output stage of add_tabled(), its constants prepared once per call. The fast form
 * (nnrt_rqf_fast()) starts its 64-bit sum at s:lo, s = sum >> 31 (0 or -1) and
 * lo = (s << 31) ^ 2^30; here the output offset and the rounding half are folded into
 * the high word too (addend = 2^(rsh-1) + (out_off << rsh): adding a multiple of 2^rsh
 * before the shift is adding out_off after it), so the start is hi:lo with
 * hi = addend + s and lo = k2 ^ (hi << 31), k2 = 2^30 ^ (addend << 31) (s = -1 flips
 * bit 0 of hi): two instructions (ADD with ASR #31, EOR with LSL #31), one SMLAL, the
 * shift, the saturation. add_tabled() checks that hi + the product's high word cannot
 * overflow, else it takes the offset after the shift (addend = 2^(rsh-1)).
 */
typedef struct {
    const int32_t *p1; /* the rescaled input 1 by value (-128..127), t1 + 128 */
    const int32_t *p2;
    int32_t mo;     /* output multiplier (>= 0) */
    int32_t addend; /* 2^(rsh-1) [+ out_off << rsh when folded] */
    uint32_t k2;    /* 2^30 ^ (addend << 31) */
    int32_t rsh;    /* -output_shift - 1, 1..30 */
    int32_t post;   /* out_off when not folded into addend, else 0 */
    int32_t lo;     /* activation range */
    int32_t hi;
} add_out_t;

/* POST: q->post, or 0 where the offset is known folded (the contiguous rows). */
static inline int32_t add_out(const add_out_t *q, int32_t x1, int32_t x2, int32_t post)
{
    const int32_t sum = q->p1[x1] + q->p2[x2];
    const int32_t h0 = q->addend + (sum >> 31);
    const uint32_t l0 = q->k2 ^ ((uint32_t)h0 << 31);
    const int64_t u = (int64_t)(((uint64_t)(uint32_t)h0 << 32) | l0) + (int64_t)sum * q->mo;
    return ((int32_t)(u >> 32) >> q->rsh) + post;
}

/* One row of n contiguous elements of each input (strides 1), four a pass, the output
 * offset folded (q->post == 0) and the activation range the whole int8 range (one
 * saturation). Each element is written after its two inputs are read: output may be
 * either input (in place). */
static inline void add_row_contig(const add_out_t *q, const int8_t *a, const int8_t *c,
                                  int8_t *out, int32_t n)
{
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        out[i] = (int8_t)nnrt_sat8(add_out(q, a[i], c[i], 0));
        out[i + 1] = (int8_t)nnrt_sat8(add_out(q, a[i + 1], c[i + 1], 0));
        out[i + 2] = (int8_t)nnrt_sat8(add_out(q, a[i + 2], c[i + 2], 0));
        out[i + 3] = (int8_t)nnrt_sat8(add_out(q, a[i + 3], c[i + 3], 0));
    }
    for (; i < n; ++i) {
        out[i] = (int8_t)nnrt_sat8(add_out(q, a[i], c[i], 0));
    }
}

/*
 * The fast loop with each input's rescaled term looked up: an int8 input takes only 256
 * values, so t1[x] = rescale1((offset1 + x) << left_shift) is the same arithmetic as the
 * per-element loop, computed once per value (bit-exact by construction); per element
 * there remain two loads, two look-ups, the add and the output's rescaling (its shift
 * e >= 2: the one-multiply fast form, add_out()). Rows whose inputs are contiguous (the
 * same shape, or a broadcast whose innermost row is not) run four elements a pass where
 * the activation range is all of int8 (add_row_contig()); broadcast rows with a zero
 * stride, and activations that clamp, the strided loop. The tables are 2 KB of the
 * caller's stack, as softmax's exp table (internal/softmax_s8.h) is 1 KB.
 */
static NNRT_NOINLINE void add_tabled(const nnrt_add_s8_params_t *params, const int8_t *input1,
                                     const int8_t *input2, int8_t *output)
{
    int32_t t1[256];
    int32_t t2[256];
    const int32_t ls = params->left_shift;
    for (int32_t v = -128; v < 128; ++v) {
        t1[v + 128] = nnrt_rq_nonpos((int32_t)((uint32_t)(params->input1_offset + v) << ls),
                                     params->input1_multiplier, -params->input1_shift);
        t2[v + 128] = nnrt_rq_nonpos((int32_t)((uint32_t)(params->input2_offset + v) << ls),
                                     params->input2_multiplier, -params->input2_shift);
    }
    add_out_t q;
    q.p1 = t1 + 128;
    q.p2 = t2 + 128;
    q.mo = params->output_multiplier;
    q.rsh = -params->output_shift - 1;
    q.lo = params->act_min;
    q.hi = params->act_max;
    /* The rescalings are monotone (multipliers >= 0): each table's extremes are its ends.
     * |high word of sum * mo| <= |sum| / 2 + 1 (mo < 2^31). */
    const int64_t m1 = t1[0] < 0 ? -(int64_t)t1[0] : t1[0];
    const int64_t n1 = t1[255] < 0 ? -(int64_t)t1[255] : t1[255];
    const int64_t m2 = t2[0] < 0 ? -(int64_t)t2[0] : t2[0];
    const int64_t n2 = t2[255] < 0 ? -(int64_t)t2[255] : t2[255];
    const int64_t high = ((m1 > n1 ? m1 : n1) + (m2 > n2 ? m2 : n2)) / 2 + 2;
    const int64_t half = (int64_t)1 << (q.rsh - 1);
    const int64_t folded = half + (int64_t)params->output_offset * ((int64_t)1 << q.rsh);
    const int64_t mag = folded < 0 ? -folded : folded;
    if (high + mag < ((int64_t)1 << 31)) {
        q.addend = (int32_t)folded;
        q.post = 0;
    } else {
        q.addend = (int32_t)half;
        q.post = params->output_offset;
    }
    q.k2 = 0x40000000u ^ ((uint32_t)q.addend << 31);
    /* the contiguous rows where the offset is folded and the activation is no clamp */
    const int contig = q.post == 0 && q.lo <= -128 && q.hi >= 127;
    const nnrt_broadcast_t *b = &params->bcast;
    NNRT_BINARY_ROW_GEOMETRY(b);
    NNRT_BINARY_WALK(int8_t, b, input1, input2, output,
        if (contig && s1 == 1 && s2 == 1) {
            add_row_contig(&q, a, c, output, n);
        } else {
            for (int32_t i = 0; i < n; ++i) {
                output[i] = (int8_t)nnrt_clamp_i32(add_out(&q, a[i * s1], c[i * s2], q.post),
                                                   q.lo, q.hi);
            }
        });
}

nnrt_status_t nnrt_add_s8(const nnrt_add_s8_params_t *params, const int8_t *input1,
                          const int8_t *input2, int8_t *output)
{
    if (params == NULL || input1 == NULL || input2 == NULL || output == NULL
        || NNRT_ADD_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_MVE
    if (nnrt_mve_add_s8(params, input1, input2, output)) {
        return NNRT_OK;
    }
#endif
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_add_s8(params, input1, input2, output)) {
        return NNRT_OK;
    }
#endif
    const nnrt_broadcast_t *b = &params->bcast;
    const int fast = params->input1_multiplier >= 0 && params->input2_multiplier >= 0
                     && params->output_multiplier >= 0;
    if (fast && nnrt_rqf_fast_shift(params->output_shift)
        && output_elements(b) >= NNRT_ADD_TABLE_MIN_ELEMENTS) {
        add_tabled(params, input1, input2, output);
        return NNRT_OK;
    }
    NNRT_BINARY_ROW_GEOMETRY(b);
    const int32_t off1_in = params->input1_offset;
    const int32_t off2_in = params->input2_offset;
    const int32_t ls = params->left_shift;
    const int32_t m1 = params->input1_multiplier;
    const int32_t m2 = params->input2_multiplier;
    const int32_t mo = params->output_multiplier;
    const int32_t e1 = -params->input1_shift;
    const int32_t e2 = -params->input2_shift;
    const int32_t eo = -params->output_shift;
    const int32_t out_off = params->output_offset;
    const int32_t lo = params->act_min;
    const int32_t hi = params->act_max;
    NNRT_BINARY_WALK(int8_t, b, input1, input2, output,
        if (!fast) {
            for (int32_t i = 0; i < n; ++i) {
                output[i] = apply_ref(params, a[i * s1], c[i * s2]);
            }
        } else {
            for (int32_t i = 0; i < n; ++i) {
                /* |offset + x| <= 255: the left shift (<= 24 by the check) stays in int32 */
                const int32_t x1 = (int32_t)((uint32_t)(off1_in + a[i * s1]) << ls);
                const int32_t x2 = (int32_t)((uint32_t)(off2_in + c[i * s2]) << ls);
                const int32_t sum = nnrt_rq_nonpos(x1, m1, e1) + nnrt_rq_nonpos(x2, m2, e2);
                const int32_t raw = nnrt_rq_nonpos(sum, mo, eo) + out_off;
                output[i] = (int8_t)nnrt_clamp_i32(raw, lo, hi);
            }
        });
    return NNRT_OK;
}
