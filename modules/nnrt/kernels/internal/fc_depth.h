/*
 * The slice check of the depth-sliced fully connected kernels (nnrt/kernels/fc_depth.h):
 * batches 1, units >= 1, 0 <= k0 < k1 <= accum_depth.
 */
#ifndef NNRT_KERNELS_INTERNAL_FC_DEPTH_H_
#define NNRT_KERNELS_INTERNAL_FC_DEPTH_H_

#include <stdint.h>

static inline int nnrt_fc_depth_bad(int32_t batches, int32_t depth, int32_t units, int32_t k0,
                                    int32_t k1)
{
    return batches != 1 || units < 1 || k0 < 0 || k1 <= k0 || k1 > depth;
}

#endif /* NNRT_KERNELS_INTERNAL_FC_DEPTH_H_ */
