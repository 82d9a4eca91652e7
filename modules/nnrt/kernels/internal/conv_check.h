/*
 * Internal to the nnrt kernels: the argument checks every int8 convolution kernel
 * shares (NULL pointers, geometry, offsets and activation ranges), cheap and O(1); one
 * copy in nnrt_conv_check.c.
 */
#ifndef NNRT_KERNELS_INTERNAL_CONV_CHECK_H_
#define NNRT_KERNELS_INTERNAL_CONV_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/kernels/conv.h"

/** 1 when the int8 convolution arguments are valid (see conv.h), else 0. */
int nnrt_conv_s8_args_ok(const nnrt_conv_s8_params_t *p, const int8_t *input,
                         const int8_t *filter, const int8_t *output, int depthwise);

#endif /* NNRT_KERNELS_INTERNAL_CONV_CHECK_H_ */
