/*
 * Internal to the nnrt kernels: the comparison kernels' skeleton. NNRT_COMPARE_FN
 * defines one static function per comparison, walking the broadcast with the binary
 * skeleton (binary.h) and writing OP(VALUE(x1), VALUE(x2)) as a bool; the public kernel
 * dispatches on the operation once, outside the loop.
 */
#ifndef NNRT_KERNELS_INTERNAL_COMPARE_H_
#define NNRT_KERNELS_INTERNAL_COMPARE_H_

#include <stdbool.h>

#include "nnrt/kernels/compare.h"
#include "binary.h"

#define NNRT_CMP_EQ(x, y) ((x) == (y))
#define NNRT_CMP_NE(x, y) ((x) != (y))
#define NNRT_CMP_GT(x, y) ((x) > (y))
#define NNRT_CMP_GE(x, y) ((x) >= (y))
#define NNRT_CMP_LT(x, y) ((x) < (y))
#define NNRT_CMP_LE(x, y) ((x) <= (y))

/* static void NAME(const nnrt_broadcast_t *b, const PT *p, const T *input1,
 *                  const T *input2, bool *output) */
#define NNRT_COMPARE_FN(NAME, T, PT, OP, VALUE1, VALUE2)                                    \
    static void NAME(const nnrt_broadcast_t *b, const PT *p, const T *input1,                \
                     const T *input2, bool *output)                                          \
    {                                                                                        \
        (void)p;                                                                             \
        NNRT_BINARY_ROWS(T, b, input1, input2, output,                                       \
                         for (int32_t i_ = 0; i_ < n; ++i_) {                                \
                             output[i_] = OP(VALUE1(p, a[i_ * s1]), VALUE2(p, c[i_ * s2]));  \
                         });                                                                 \
    }

/* The six comparisons of one type, named PREFIX_eq ... PREFIX_le. */
#define NNRT_COMPARE_FNS(PREFIX, T, PT, VALUE1, VALUE2)                                     \
    NNRT_COMPARE_FN(PREFIX##_eq, T, PT, NNRT_CMP_EQ, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FN(PREFIX##_ne, T, PT, NNRT_CMP_NE, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FN(PREFIX##_gt, T, PT, NNRT_CMP_GT, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FN(PREFIX##_ge, T, PT, NNRT_CMP_GE, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FN(PREFIX##_lt, T, PT, NNRT_CMP_LT, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FN(PREFIX##_le, T, PT, NNRT_CMP_LE, VALUE1, VALUE2)

/* Dispatch on params->op; returns from the calling kernel. */
#define NNRT_COMPARE_DISPATCH(PREFIX, params, input1, input2, output)                       \
    do {                                                                                     \
        const nnrt_broadcast_t *b_ = &(params)->bcast;                                       \
        switch ((params)->op) {                                                              \
        case NNRT_CMP_EQUAL: PREFIX##_eq(b_, params, input1, input2, output); break;         \
        case NNRT_CMP_NOT_EQUAL: PREFIX##_ne(b_, params, input1, input2, output); break;     \
        case NNRT_CMP_GREATER: PREFIX##_gt(b_, params, input1, input2, output); break;       \
        case NNRT_CMP_GREATER_EQUAL: PREFIX##_ge(b_, params, input1, input2, output); break; \
        case NNRT_CMP_LESS: PREFIX##_lt(b_, params, input1, input2, output); break;          \
        case NNRT_CMP_LESS_EQUAL: PREFIX##_le(b_, params, input1, input2, output); break;    \
        default: return NNRT_ERR_ARG;                                                        \
        }                                                                                    \
    } while (0)

#define NNRT_CMP_RAW(p, x) (x)

/**
 * A whole comparison kernel, `nnrt_status_t NAME(const PT *params, const T *input1,
 * const T *input2, bool *output)`: NNRT_ERR_ARG for a NULL pointer, BAD(params) or an
 * unknown op, else the six comparisons PREFIX_eq..PREFIX_le of the values VALUE1 /
 * VALUE2 make of the inputs (NNRT_CMP_RAW: the raw values).
 */
#define NNRT_COMPARE_KERNEL(NAME, PREFIX, T, PT, BAD, VALUE1, VALUE2)                         \
    NNRT_COMPARE_FNS(PREFIX, T, PT, VALUE1, VALUE2)                                          \
    nnrt_status_t NAME(const PT *params, const T *input1, const T *input2, bool *output)     \
    {                                                                                        \
        if (params == NULL || input1 == NULL || input2 == NULL || output == NULL             \
            || BAD(params)) {                                                                \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        NNRT_COMPARE_DISPATCH(PREFIX, params, input1, input2, output);                       \
        return NNRT_OK;                                                                      \
    }

#endif /* NNRT_KERNELS_INTERNAL_COMPARE_H_ */
