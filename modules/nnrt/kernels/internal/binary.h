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

#endif /* NNRT_KERNELS_INTERNAL_BINARY_H_ */
