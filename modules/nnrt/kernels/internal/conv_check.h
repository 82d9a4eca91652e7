/*
 * Internal to the nnrt kernels: the argument checks every int8 convolution kernel
 * shares (NULL pointers, geometry, offsets and activation ranges), cheap and O(1); one
 * copy in nnrt_conv_check.c. The conditions on the parameters alone are also exported
 * as nnrt_conv_s8_check() (conv.h; conv/nnrt_conv_s8_check.c), for the loader.
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_CHECK_H_
#define NNRT_KERNELS_INTERNAL_CONV_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

/* 1 when the parameters (not NULL) break the kernels' contract (see conv.h); and when
 * the fused pool's does. Macros: each user compiles the comparisons written out. */
#define NNRT_CONV_S8_PARAMS_BAD(p, depthwise)                                          \
    ((p)->multiplier == NULL || (p)->shift == NULL                                          \
     || !nnrt_conv_geom_valid(&(p)->geom, (p)->pool, depthwise)                             \
     || (p)->act_min < INT8_MIN || (p)->act_max > INT8_MAX || (p)->act_min > (p)->act_max   \
     || (p)->output_offset < INT8_MIN || (p)->output_offset > INT8_MAX                      \
     || (p)->input_offset < -INT8_MAX || (p)->input_offset > INT8_MAX + 1)
#define NNRT_CONV_S8_POOL_BAD(pool)                                                   \
    ((pool) != NULL && ((pool)->act_min < INT8_MIN || (pool)->act_max > INT8_MAX            \
                        || (pool)->act_min > (pool)->act_max))

/** 1 when the int8 convolution arguments are valid (see conv.h), else 0. */
int nnrt_conv_s8_args_ok(const nnrt_conv_s8_params_t *p, const int8_t *input,
                         const int8_t *filter, const int8_t *output, int depthwise);

#endif /* NNRT_KERNELS_INTERNAL_CONV_CHECK_H_ */
