/*
 * The exported argument check of nnrt_clamp_s8() (activation.h): the conditions it
 * tests on every call, on the scalars alone, for callers that check before they run
 * (the model loader).
 */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_clamp_s8_check(int32_t lo, int32_t hi, int32_t size)
{
    if (size < 0 || lo < INT8_MIN || hi > INT8_MAX || lo > hi) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
