/*
 * Internal to the nnrt kernels: the one skeleton of the binary element-wise kernels
 * (ADD, SUB, MUL, MAXIMUM, MINIMUM; int8 and float32). The output is walked in
 * row-major order through the build-time broadcast descriptor (nnrt_broadcast_t,
 * elementwise.h), one innermost row at a time; each element is written after its
 * inputs are read, so the output may alias a same-sized input (in place).
 *
 * Macros, not functions: each kernel expands the skeleton around its own per-element
 * operation, so the compiler generates the code of the loop written out in the kernel.
 */
#ifndef NNRT_KERNELS_INTERNAL_BINARY_H_
#define NNRT_KERNELS_INTERNAL_BINARY_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/elementwise.h"

/**
 * Run ROW once per innermost row of the broadcast @p b, then advance @p output by the
 * row: NNRT_BINARY_ROW_GEOMETRY() then NNRT_BINARY_WALK(). In ROW: `a` and `c`
 * (const T *) are the row's first input elements, `n` the row length, `s1`/`s2` the
 * inputs' element strides along it; ROW writes output[0..n). Declarations at the
 * caller's scope, as the loop written out (the same code): once per function, as its
 * last statements before the return.
 */
#define NNRT_BINARY_ROWS(T, b, input1, input2, output, ROW)                                  \
    NNRT_BINARY_ROW_GEOMETRY(b);                                                             \
    NNRT_BINARY_WALK(T, b, input1, input2, output, ROW)

/** The row's length `n` and the inputs' strides `s1`, `s2` along it. */
#define NNRT_BINARY_ROW_GEOMETRY(b)                                                          \
    const int32_t last_ = (b)->rank - 1;                                                     \
    const int32_t n = (b)->dims[last_];                                                      \
    const ptrdiff_t s1 = (b)->stride1[last_];                                                \
    const ptrdiff_t s2 = (b)->stride2[last_]

/** The walk over the rows (after NNRT_BINARY_ROW_GEOMETRY(), whose names ROW uses). */
#define NNRT_BINARY_WALK(T, b, input1, input2, output, ROW)                                  \
    int32_t idx_[NNRT_MAX_DIMS] = {0};                                                       \
    ptrdiff_t off1_ = 0;                                                                     \
    ptrdiff_t off2_ = 0;                                                                     \
    do {                                                                                     \
        const T *a = (input1) + off1_;                                                       \
        const T *c = (input2) + off2_;                                                       \
        ROW                                                                                  \
        (output) += n;                                                                       \
    } while (nnrt_broadcast_next_row((b), idx_, &off1_, &off2_))

/** output[i] = OP(x1, x2) for every output element (OP: a function or macro). */
#define NNRT_BINARY_ELEMENTS(T, b, input1, input2, output, OP)                               \
    NNRT_BINARY_ROWS(T, b, input1, input2, output,                                           \
                     for (int32_t i_ = 0; i_ < n; ++i_) {                                    \
                         (output)[i_] = OP(a[i_ * s1], c[i_ * s2]);                          \
                     })


/**
 * A whole binary kernel, `nnrt_status_t NAME(const PT *params, const T *input1,
 * const T *input2, T *output)`: NNRT_ERR_ARG for a NULL pointer or BAD(params) (the
 * predicate the kernel's exported check tests too), else output[i] =
 * APPLY(params, x1, x2) over the broadcast BCAST(params), then NNRT_OK. The same code
 * as the function written out around NNRT_BINARY_ELEMENTS().
 */
#define NNRT_BINARY_KERNEL(NAME, PT, T, BAD, BCAST, APPLY)                                   \
    nnrt_status_t NAME(const PT *params, const T *input1, const T *input2, T *output)        \
    {                                                                                        \
        if (params == NULL || input1 == NULL || input2 == NULL || output == NULL             \
            || BAD(params)) {                                                                \
            return NNRT_ERR_ARG;                                                             \
        }                                                                                    \
        const nnrt_broadcast_t *b = BCAST(params);                                           \
        NNRT_BINARY_ROWS(T, b, input1, input2, output,                                       \
                         for (int32_t i_ = 0; i_ < n; ++i_) {                                \
                             output[i_] = APPLY(params, a[i_ * s1], c[i_ * s2]);             \
                         });                                                                 \
        return NNRT_OK;                                                                      \
    }

/** BCAST of NNRT_BINARY_KERNEL(): the parameters are the broadcast itself, or hold it. */
#define NNRT_BINARY_BCAST_SELF(params) (params)
#define NNRT_BINARY_BCAST_FIELD(params) (&(params)->bcast)

/** BAD of NNRT_BINARY_KERNEL() for kernels whose only parameter is the broadcast. */
#define NNRT_BINARY_BCAST_BAD(bcast) (!nnrt_broadcast_valid(bcast))

/** BAD of the float32 kernels with a nnrt_binary_f32_params_t. */
#define NNRT_BINARY_F32_BAD(params) (!nnrt_binary_f32_params_ok(params))

/**
 * The float32 ADD/SUB/MUL element: out = min(max(x1 OPERATOR x2, act_min), act_max)
 * (std::min(std::max(x, lo), hi), with the comparisons of the C++ library). NAME: the
 * static inline function it defines, for APPLY.
 */
#define NNRT_BINARY_F32_ACT_APPLY(NAME, OPERATOR)                                             \
    static inline float NAME(const nnrt_binary_f32_params_t *p, float x1, float x2)          \
    {                                                                                        \
        const float x = x1 OPERATOR x2;                                                      \
        const float lo = x < p->act_min ? p->act_min : x;                                    \
        return p->act_max < lo ? p->act_max : lo;                                            \
    }

/**
 * The float32 ADD/SUB/MUL kernel NAME: out = min(max(in1 OPERATOR in2, act_min),
 * act_max) with broadcasting.
 */
#define NNRT_BINARY_F32_ACT_KERNEL(NAME, OPERATOR)                                            \
    NNRT_BINARY_F32_ACT_APPLY(NAME##_apply, OPERATOR)                                         \
    NNRT_BINARY_KERNEL(NAME, nnrt_binary_f32_params_t, float, NNRT_BINARY_F32_BAD,          \
                       NNRT_BINARY_BCAST_FIELD, NAME##_apply)

/** The raw MAXIMUM (COMPARE >) / MINIMUM (<) kernel NAME on T, TFLM's expression
 *  (int8: quantisation parameters not used). */
#define NNRT_BINARY_PICK_KERNEL(NAME, T, COMPARE)                                             \
    static inline T NAME##_apply(const nnrt_broadcast_t *unused, T x1, T x2)                 \
    {                                                                                        \
        (void)unused;                                                                        \
        return x1 COMPARE x2 ? x1 : x2;                                                      \
    }                                                                                        \
    NNRT_BINARY_KERNEL(NAME, nnrt_broadcast_t, T, NNRT_BINARY_BCAST_BAD,                    \
                       NNRT_BINARY_BCAST_SELF, NAME##_apply)

#endif /* NNRT_KERNELS_INTERNAL_BINARY_H_ */
