/*
 * Internal to the nnrt kernels: the one skeleton of the reductions (REDUCE_MAX,
 * REDUCE_MIN, SUM, REDUCE_ALL) over the geometry of nnrt_mean_geom_t (pool.h). For every
 * output element, in the row-major order of the kept dimensions, `acc` starts at INIT and
 * takes COMBINE(acc, v) for each reduced element v in increasing input address order.
 *
 * A macro, not a function: each kernel expands it around its own type and combination.
 */
#ifndef NNRT_KERNELS_INTERNAL_REDUCE_H_
#define NNRT_KERNELS_INTERNAL_REDUCE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/pool.h"

static inline int nnrt_reduce_geom_valid(const nnrt_mean_geom_t *g)
{
    if (g->outer_rank < 1 || g->outer_rank > NNRT_MEAN_MAX_DIMS || g->reduce_rank < 1
        || g->reduce_rank > NNRT_MEAN_MAX_DIMS) {
        return 0;
    }
    for (int32_t d = 0; d < g->outer_rank; ++d) {
        if (g->outer_dims[d] < 1 || g->outer_strides[d] < 0) {
            return 0;
        }
    }
    for (int32_t d = 0; d < g->reduce_rank; ++d) {
        if (g->reduce_dims[d] < 1 || g->reduce_strides[d] < 0) {
            return 0;
        }
    }
    return 1;
}

/* Advance `base` to the next index of the (dims, strides) space; 0 after the last. */
static inline int nnrt_reduce_next(const int32_t *dims, const int32_t *strides,
                                   int32_t rank, int32_t *idx, ptrdiff_t *base)
{
    for (int32_t d = rank - 1; d >= 0; --d) {
        *base += strides[d];
        if (++idx[d] < dims[d]) {
            return 1;
        }
        *base -= (ptrdiff_t)strides[d] * dims[d];
        idx[d] = 0;
    }
    return 0;
}

#define NNRT_REDUCE(T, g, input, output, INIT, COMBINE)                                      \
    do {                                                                                     \
        int32_t oidx_[NNRT_MEAN_MAX_DIMS] = {0};                                             \
        ptrdiff_t obase_ = 0;                                                                \
        const int32_t rlast_ = (g)->reduce_rank - 1;                                         \
        const int32_t rn_ = (g)->reduce_dims[rlast_];                                        \
        const ptrdiff_t rs_ = (g)->reduce_strides[rlast_];                                   \
        do {                                                                                 \
            T acc = (INIT);                                                                  \
            int32_t ridx_[NNRT_MEAN_MAX_DIMS] = {0};                                         \
            ptrdiff_t rbase_ = obase_;                                                       \
            do {                                                                             \
                const T *p_ = (input) + rbase_;                                              \
                for (int32_t i_ = 0; i_ < rn_; ++i_) {                                       \
                    const T v = p_[i_ * rs_];                                                \
                    acc = COMBINE(acc, v);                                                   \
                }                                                                            \
            } while (nnrt_reduce_next((g)->reduce_dims, (g)->reduce_strides, rlast_, ridx_,  \
                                      &rbase_));                                             \
            *(output)++ = acc;                                                               \
        } while (nnrt_reduce_next((g)->outer_dims, (g)->outer_strides, (g)->outer_rank,     \
                                  oidx_, &obase_));                                          \
    } while (0)

#define NNRT_REDUCE_MAX_OP(acc, v) ((v) > (acc) ? (v) : (acc))
#define NNRT_REDUCE_MIN_OP(acc, v) ((v) < (acc) ? (v) : (acc))
#define NNRT_REDUCE_SUM_OP(acc, v) ((v) + (acc))
#define NNRT_REDUCE_ALL_OP(acc, v) ((uint8_t)((acc) && (v) != 0u))

#endif /* NNRT_KERNELS_INTERNAL_REDUCE_H_ */
