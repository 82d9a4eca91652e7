/*
 * Loader checks of the activations (int8 table lookup and clamp; float32 RELU, RELU6,
 * LOGISTIC, TANH, HARD_SWISH), called by the generated kernel table (blob_dispatch.c)
 * after it read the scalars: the kernels' own contract (nnrt_*_check(),
 * nnrt/kernels/activation.h), then the element count bounded by the tensors.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/activation.h"

#define holds nnrt_blob_holds

/* table (256 entries), x, y; scalar: elements */
nnrt_status_t nnrt_blob_check_table_lookup_s8(nnrt_blob_call_t *c)
{
    const int32_t n = c->sc[0].i;

    return nnrt_table_lookup_s8_check(n) == NNRT_OK &&
                   holds(c->args, 0, NNRT_INT8, 256u, 1) &&
                   holds(c->args, 1, NNRT_INT8, (uint64_t)n, 1) &&
                   holds(c->args, 2, NNRT_INT8, (uint64_t)n, 1)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* scalars: lo, hi, elements */
nnrt_status_t nnrt_blob_check_clamp_s8(nnrt_blob_call_t *c)
{
    const int32_t lo = c->sc[0].i;
    const int32_t hi = c->sc[1].i;
    const int32_t n = c->sc[2].i;

    return nnrt_clamp_s8_check(lo, hi, n) == NNRT_OK &&
                   holds(c->args, 0, NNRT_INT8, (uint64_t)n, 1) &&
                   holds(c->args, 1, NNRT_INT8, (uint64_t)n, 1)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* int16 RELU6: lo, hi, int16 x, y, elements */
nnrt_status_t nnrt_blob_check_clamp_s16(nnrt_blob_call_t *c)
{
    const int32_t lo = c->sc[0].i;
    const int32_t hi = c->sc[1].i;
    const int32_t n = c->sc[2].i;

    return nnrt_clamp_s16_check(lo, hi, n) == NNRT_OK &&
                   holds(c->args, 0, NNRT_INT16, (uint64_t)n, 2) &&
                   holds(c->args, 1, NNRT_INT16, (uint64_t)n, 2)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* float32 x, y; scalar: elements */
nnrt_status_t nnrt_blob_check_unary_f32(nnrt_blob_call_t *c)
{
    const int32_t n = c->sc[0].i;

    return nnrt_unary_f32_check(n) == NNRT_OK &&
                   holds(c->args, 0, NNRT_FLOAT32, (uint64_t)n, 4) &&
                   holds(c->args, 1, NNRT_FLOAT32, (uint64_t)n, 4)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}
