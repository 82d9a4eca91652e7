/*
 * The exported argument check of the float32 element-wise activations (RELU, RELU6,
 * LOGISTIC, TANH, HARD_SWISH; activation.h): the element count they test on every
 * call, for callers that check before they run (the model loader).
 */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_unary_f32_check(int32_t size)
{
    return NNRT_UNARY_F32_SIZE_BAD(size) ? NNRT_ERR_ARG : NNRT_OK;
}
