/* The argument check of nnrt_clamp_s16(). */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_clamp_s16_check(int32_t lo, int32_t hi, int32_t size)
{
    if (NNRT_CLAMP_S16_ARGS_BAD(lo, hi, size)) {
        return NNRT_ERR_ARG;
    }
    return NNRT_OK;
}
