/*
 * int8 ARG_MAX along one axis (TFLM's reference ArgMinMax with the micro kernel's
 * GreaterFn): the first index whose value no later one beats with `>`
 * (internal/arg_min_max.h).
 */
#include "nnrt/kernels/reduce.h"
#include "../internal/arg_min_max.h"

NNRT_ARG_MIN_MAX_KERNEL(nnrt_arg_max_s8, int8_t, >)
