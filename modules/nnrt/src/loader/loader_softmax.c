/*
 * Loader checks of SOFTMAX (int8, int8 -> int16, int16, float32), called by the generated
 * kernel table (blob_dispatch.c) after it decoded the record; scalars: rows, depth
 * (float32: beta first). The kernels' own contract (nnrt_softmax_*_check(),
 * nnrt/kernels/softmax.h), then tensor sizes and the loader's bound on the multiplier.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/softmax.h"

#define holds nnrt_blob_holds

nnrt_status_t nnrt_blob_check_softmax_s8(nnrt_blob_call_t *c,
                                         const nnrt_softmax_s8_params_t *p)
{
    const int out16 = c->kernel == NNRT_BLOB_K_SOFTMAX_S8_S16;
    const int32_t rows = c->sc[0].i;
    const int32_t depth = c->sc[1].i;

    if (nnrt_softmax_s8_check(p, rows, depth) != NNRT_OK || p->input_multiplier < 0 ||
        !holds(c->args, 0, NNRT_INT8, (uint64_t)rows * (uint64_t)depth, 1) ||
        !holds(c->args, 1, out16 ? NNRT_INT16 : NNRT_INT8, (uint64_t)rows * (uint64_t)depth,
               out16 ? 2u : 1u)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_softmax_f32(nnrt_blob_call_t *c)
{
    const int32_t rows = c->sc[1].i;
    const int32_t depth = c->sc[2].i;

    if (nnrt_softmax_f32_check(rows, depth) != NNRT_OK ||
        !holds(c->args, 0, NNRT_FLOAT32, (uint64_t)rows * (uint64_t)depth, 4) ||
        !holds(c->args, 1, NNRT_FLOAT32, (uint64_t)rows * (uint64_t)depth, 4)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_softmax_s16(nnrt_blob_call_t *c,
                                          const nnrt_softmax_s16_params_t *p)
{
    const int32_t rows = c->sc[0].i;
    const int32_t depth = c->sc[1].i;

    if (nnrt_softmax_s16_check(p, rows, depth) != NNRT_OK ||
        !holds(c->args, 0, NNRT_INT16, (uint64_t)rows * (uint64_t)depth, 2) ||
        !holds(c->args, 1, NNRT_INT16, (uint64_t)rows * (uint64_t)depth, 2)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}
