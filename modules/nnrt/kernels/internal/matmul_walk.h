/*
 * Internal to the nnrt kernels: the walk of BATCH_MATMUL (matmul.h) over batches,
 * output rows and columns, shared by the int8, int16 and float32 kernels. In BODY,
 * `a` points at lhs row i of the batch, `c` at rhs column j of the batch, and BODY
 * writes output element `out[j]` of the row `out`.
 */
#ifndef NNRT_KERNELS_INTERNAL_MATMUL_WALK_H_
#define NNRT_KERNELS_INTERNAL_MATMUL_WALK_H_

#include <stddef.h>

#include "nnrt/kernels/matmul.h"

#define NNRT_MATMUL_WALK(T, s, lhs, rhs, output, BODY)                                        \
    do {                                                                                      \
        T *out = (output);                                                                    \
        for (int32_t b0 = 0; b0 < (s)->batch[0]; ++b0) {                                      \
            for (int32_t b1 = 0; b1 < (s)->batch[1]; ++b1) {                                  \
                for (int32_t b2 = 0; b2 < (s)->batch[2]; ++b2) {                              \
                    const T *lb = (lhs) + (ptrdiff_t)b0 * (s)->lhs_batch_stride[0]            \
                                  + (ptrdiff_t)b1 * (s)->lhs_batch_stride[1]                  \
                                  + (ptrdiff_t)b2 * (s)->lhs_batch_stride[2];                 \
                    const T *rb = (rhs) + (ptrdiff_t)b0 * (s)->rhs_batch_stride[0]            \
                                  + (ptrdiff_t)b1 * (s)->rhs_batch_stride[1]                  \
                                  + (ptrdiff_t)b2 * (s)->rhs_batch_stride[2];                 \
                    for (int32_t i = 0; i < (s)->rows; ++i) {                                 \
                        const T *a = lb + (ptrdiff_t)i * (s)->lhs_row_stride;                 \
                        for (int32_t j = 0; j < (s)->cols; ++j) {                             \
                            const T *c = rb + (ptrdiff_t)j * (s)->rhs_col_stride;             \
                            BODY                                                              \
                        }                                                                     \
                        out += (s)->cols;                                                     \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#endif /* NNRT_KERNELS_INTERNAL_MATMUL_WALK_H_ */
