/*
 * The exported argument check of the float32 SOFTMAX kernel (softmax.h): the extents
 * it tests on every call, for callers that check before they run (the model loader).
 */
#include "nnrt/kernels/softmax.h"

nnrt_status_t nnrt_softmax_f32_check(int32_t rows, int32_t depth)
{
    return NNRT_SOFTMAX_F32_ARGS_BAD(rows, depth) ? NNRT_ERR_ARG : NNRT_OK;
}
