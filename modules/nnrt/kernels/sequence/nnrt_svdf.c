/*
 * SVDF (int8 with an int16 or int8 state, and float32) in the arithmetic and
 * summation order of TFLM's reference SVDF; see nnrt/kernels/sequence.h.
 */
#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/sequence.h"
#include "../internal/dot.h"
#include "../internal/requant.h"
#include "../internal/simd.h"

static int svdf_dims_bad(int32_t batches, int32_t input_size, int32_t filters, int32_t units,
                         int32_t rank, int32_t memory)
{
    return batches < 1 || input_size < 1 || units < 1 || rank < 1 || memory < 1
           || filters != units * rank;
}

/* v narrowed to [lo, hi] modulo its width (hi - lo + 1), as C++'s conversion to the
 * state type does in TFLM (defined here, not left to the compiler). */
static int32_t svdf_wrap(int32_t v, int32_t lo, int32_t hi)
{
    const uint32_t span = (uint32_t)(hi - lo) + 1u;

    return (int32_t)(((uint32_t)v - (uint32_t)lo) % span) + lo;
}

/*
 * The state's flat shift by one element (sequence.h step 1) followed by the newest
 * column (step 2) is, row by row, row[m] = row[m + 1] for m < memory - 1 and
 * row[memory - 1] = v: the last element of a row receives the next row's first, which
 * the newest column overwrites. So each filter's row shifts, takes its new value and
 * yields its time product (step 3) in one pass over it, right after its feature dot
 * product; integer sums, so the order of the terms does not change them.
 */

/* The row step from element m on (the elements the word loops left), one at a time. */
#define SVDF_ROW_REST(T)                                                                   \
    do {                                                                                   \
        for (; m + 1 < memory; ++m) {                                                      \
            const int32_t s = row[m + 1];                                                  \
            row[m] = (T)s;                                                                 \
            sum += (int32_t)w[m] * (s - zp);                                               \
        }                                                                                  \
        row[memory - 1] = v;                                                               \
        sum += (int32_t)w[memory - 1] * ((int32_t)v - zp);                                 \
    } while (0)

/* int16 row: shift, append v, return sum_m w[m] * (row[m] - zp). */
static int32_t svdf_row_s16(int16_t *row, const int16_t *w, int32_t memory, int16_t v,
                            int32_t zp)
{
    int32_t sum = 0;
    int32_t m = 0;
#if NNRT_DSP
    if (zp == 0) {
        /* two shifted elements per unaligned word load from row + 1, before either
         * is overwritten (row[2k], row[2k+1] are written after row[2k+1..2k+2] are read) */
        for (; m + 2 < memory; m += 2) {
            const uint32_t s = nnrt_ld32(row + m + 1);
            nnrt_st32(row + m, s);
            sum = __smlad(s, nnrt_ld32(w + m), sum);
        }
    }
#endif
    SVDF_ROW_REST(int16_t);
    return sum;
}

/* int8 row: as svdf_row_s16 */
static int32_t svdf_row_s8(int8_t *row, const int8_t *w, int32_t memory, int8_t v,
                           int32_t zp)
{
    int32_t sum = 0;
    int32_t m = 0;
#if NNRT_DSP
    const uint32_t off2 = nnrt_pair16(-zp);
    for (; m + 4 < memory; m += 4) {
        const uint32_t s = nnrt_ld32(row + m + 1);
        const uint32_t wv = nnrt_ld32(w + m);
        nnrt_st32(row + m, s);
        sum = __smlad(__sxtab16(off2, s), __sxtb16(wv), sum);
        sum = __smlad(nnrt_sxtab16_ror8(off2, s), nnrt_sxtb16_ror8(wv), sum);
    }
#endif
    SVDF_ROW_REST(int8_t);
    return sum;
}

/* For each batch: per group of (up to) three filters, the feature dot products (the
 * fast dot of the fully connected layer), requantised into the state type, then each
 * filter's row step: filt[b][f] = its time product. */
#define SVDF_INT_BODY(T, TMIN, TMAX, ROW)                                                  \
    do {                                                                                   \
        const int32_t mem = p->memory_size;                                                \
        const int32_t depth = p->input_size;                                               \
        for (int32_t b = 0; b < p->batches; ++b) {                                         \
            const int8_t *x = input + (size_t)b * (size_t)depth;                           \
            T *st = (T *)state + (size_t)b * (size_t)p->num_filters * (size_t)mem;         \
            int32_t *out = filt + (size_t)b * (size_t)p->num_filters;                      \
            for (int32_t f = 0; f < p->num_filters; f += 3) {                              \
                const int32_t k_end = (p->num_filters - f < 3) ? p->num_filters - f : 3;   \
                const int8_t *w = weights_feature + (size_t)f * (size_t)depth;             \
                int32_t acc[3] = {0, 0, 0};                                                \
                if (k_end == 3) {                                                          \
                    nnrt_dot3_s8(x, w, depth, depth, -p->input_zero_point, acc);           \
                } else {                                                                   \
                    for (int32_t k = 0; k < k_end; ++k) {                                  \
                        acc[k] = nnrt_dot1_s8(x, w + (size_t)k * (size_t)depth, depth,    \
                                              -p->input_zero_point, 0);                    \
                    }                                                                      \
                }                                                                          \
                for (int32_t k = 0; k < k_end; ++k) {                                      \
                    int32_t a = nnrt_clamp_i32(nnrt_rqf(acc[k], &rq1, 0), TMIN, TMAX)     \
                                + p->state_zero_point;                                     \
                    const size_t r = (size_t)(f + k) * (size_t)mem;                        \
                    out[f + k] = ROW(st + r, (const T *)weights_time + r, mem,             \
                                     (T)svdf_wrap(a, TMIN, TMAX), p->state_zero_point);    \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

nnrt_status_t nnrt_svdf_s8(const nnrt_svdf_s8_params_t *params, const int8_t *input,
                           const int8_t *weights_feature, const void *weights_time,
                           const int32_t *bias, void *state, int8_t *output, void *scratch)
{
    const nnrt_svdf_s8_params_t *p = params;

    if (p == NULL || input == NULL || weights_feature == NULL || weights_time == NULL
        || bias == NULL || state == NULL || output == NULL || scratch == NULL
        || svdf_dims_bad(p->batches, p->input_size, p->num_filters, p->num_units, p->rank,
                         p->memory_size)
        || (p->state_bytes != 1 && p->state_bytes != 2)) {
        return NNRT_ERR_ARG;
    }
    int32_t *filt = (int32_t *)scratch;
    int32_t *units = filt + (size_t)p->batches * (size_t)p->num_filters;
    nnrt_rqf_t rq1;
    nnrt_rqf_t rq2;

    nnrt_rqf_init(&rq1, p->mult1, p->shift1);
    nnrt_rqf_init(&rq2, p->mult2, p->shift2);

    if (p->state_bytes == 2) {
        SVDF_INT_BODY(int16_t, INT16_MIN, INT16_MAX, svdf_row_s16);
    } else {
        SVDF_INT_BODY(int8_t, INT8_MIN, INT8_MAX, svdf_row_s8);
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        int32_t *out = units + (size_t)b * (size_t)p->num_units;
        const int32_t *acc = filt + (size_t)b * (size_t)p->num_filters;
        for (int32_t u = 0; u < p->num_units; ++u) {
            out[u] = bias[u];
            for (int32_t r = 0; r < p->rank; ++r) {
                out[u] += *acc++;
            }
        }
    }
    const size_t n = (size_t)p->batches * (size_t)p->num_units;
    for (size_t i = 0; i < n; ++i) {
        output[i] = (int8_t)nnrt_sat8(nnrt_rqf(units[i], &rq2, p->output_zero_point));
    }
    return NNRT_OK;
}

/* TFLM's ActivationValFloat for the clamping activations (std::max / std::min). */
static float svdf_act(int32_t activation, float v)
{
    switch (activation) {
    case 1: /* RELU: max(0, v) */
        return (0.0f < v) ? v : 0.0f;
    case 2: /* RELU_N1_TO_1: max(-1, min(v, 1)) */
        v = (1.0f < v) ? 1.0f : v;
        return (-1.0f < v) ? v : -1.0f;
    case 3: /* RELU6: max(0, min(v, 6)) */
        v = (6.0f < v) ? 6.0f : v;
        return (0.0f < v) ? v : 0.0f;
    default:
        return v;
    }
}

nnrt_status_t nnrt_svdf_f32(const nnrt_svdf_f32_params_t *params, const float *input,
                            const float *weights_feature, const float *weights_time,
                            const float *bias, float *state, float *output, void *scratch)
{
    const nnrt_svdf_f32_params_t *p = params;

    if (p == NULL || input == NULL || weights_feature == NULL || weights_time == NULL
        || state == NULL || output == NULL || scratch == NULL
        || svdf_dims_bad(p->batches, p->input_size, p->num_filters, p->num_units, p->rank,
                         p->memory_size)
        || p->activation < 0 || p->activation > 3) {
        return NNRT_ERR_ARG;
    }
    float *filt = (float *)scratch;
    const size_t total = (size_t)p->batches * (size_t)p->num_filters * (size_t)p->memory_size;

    for (size_t i = 0; i + 1 < total; ++i) {
        state[i] = state[i + 1];
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        const float *x = input + (size_t)b * (size_t)p->input_size;
        float *col = state + (size_t)b * (size_t)p->num_filters * (size_t)p->memory_size
                     + (size_t)(p->memory_size - 1);
        const float *w = weights_feature;
        for (int32_t f = 0; f < p->num_filters; ++f) {
            float dot = 0.0f;
            for (int32_t c = 0; c < p->input_size; ++c) {
                dot += *w++ * x[c];
            }
            col[(size_t)f * (size_t)p->memory_size] = dot;
        }
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        const float *s = state + (size_t)b * (size_t)p->num_filters * (size_t)p->memory_size;
        const float *w = weights_time;
        float *acc = filt + (size_t)b * (size_t)p->num_filters;
        for (int32_t f = 0; f < p->num_filters; ++f) {
            float sum = 0.0f;
            for (int32_t m = 0; m < p->memory_size; ++m) {
                sum += *w++ * *s++;
            }
            acc[f] = sum;
        }
    }
    for (int32_t b = 0; b < p->batches; ++b) {
        float *out = output + (size_t)b * (size_t)p->num_units;
        const float *acc = filt + (size_t)b * (size_t)p->num_filters;
        for (int32_t u = 0; u < p->num_units; ++u) {
            out[u] = bias != NULL ? bias[u] : 0.0f;
        }
        for (int32_t u = 0; u < p->num_units; ++u) {
            for (int32_t r = 0; r < p->rank; ++r) {
                out[u] += *acc++;
            }
        }
        for (int32_t u = 0; u < p->num_units; ++u) {
            out[u] = svdf_act(p->activation, out[u]);
        }
    }
    return NNRT_OK;
}
