/*
 * The exported argument check of nnrt_clamp_s8() (activation.h): the conditions it
 * tests on every call, on the scalars alone, for callers that check before they run
 * (the model loader).
 */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_clamp_s8_check(int32_t lo, int32_t hi, int32_t size)
{
    if (NNRT_CLAMP_S8_ARGS_BAD(lo, hi, size)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
