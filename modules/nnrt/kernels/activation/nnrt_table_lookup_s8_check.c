/*
 * The exported argument check of nnrt_table_lookup_s8() (activation.h): the element
 * count it tests on every call, for callers that check before they run (the model
 * loader).
 */
#include "nnrt/kernels/activation.h"

nnrt_status_t nnrt_table_lookup_s8_check(int32_t size)
{
    return size < 0 ? NNRT_ERR_ARG : NNRT_OK;
}
