/*
 * The exported argument check of the broadcasting binary kernels (MAXIMUM, MINIMUM and
 * the others whose only parameters are their broadcast) (elementwise.h): the conditions
 * the kernel tests on every call, on the parameters alone, for callers that check before
 * they run (the generated <model>_prepare(), the model loader). Its own file, as every
 * check.
 */
#include <stddef.h>

#include "nnrt/kernels/elementwise.h"

nnrt_status_t nnrt_broadcast_check(const nnrt_broadcast_t *bcast)
{
    return bcast != NULL && nnrt_broadcast_valid(bcast) ? NNRT_OK : NNRT_ERR_ARG;
}
