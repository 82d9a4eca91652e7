/*
 * Loader checks of the binary element-wise family (ADD, SUB, MUL, MAXIMUM, MINIMUM;
 * int8, int16, int32, int64 and float32 as the kernels take them, broadcasting), called by the generated kernel table
 * (blob_dispatch.c) after it decoded the record. The kernels' own contract is
 * nnrt_add_s8_check() & co. (nnrt/kernels/elementwise.h); here the broadcast walks
 * bounded by the tensors, and the loader's tighter bounds on offsets, multipliers and
 * the left shift.
 */
#include "blob_checks.h"
#include "loader_check.h"
#include "nnrt/kernels/elementwise.h"

#define in_range nnrt_blob_in_range
#define holds nnrt_blob_holds

/* Broadcast of input1 (arg 0) and input2 (arg 1) to the output (arg 2). */
static int bcast_ok(const nnrt_broadcast_t *b, const nnrt_blob_args_t *a, nnrt_dtype_t dt,
                    uint32_t size)
{
    uint64_t last1;
    uint64_t last2;
    uint64_t n = nnrt_blob_walk(b->rank, b->dims, b->stride1, &last1);

    if (n == 0u || nnrt_blob_walk(b->rank, b->dims, b->stride2, &last2) != n) {
        return 0;
    }
    return holds(a, 0, dt, last1 + 1u, size) && holds(a, 1, dt, last2 + 1u, size) &&
           holds(a, 2, dt, n, size);
}

nnrt_status_t nnrt_blob_check_add_s8(nnrt_blob_call_t *c, const nnrt_add_s8_params_t *p)
{
    if (nnrt_add_s8_check(p) != NNRT_OK || !bcast_ok(&p->bcast, c->args, NNRT_INT8, 1) ||
        !in_range(p->input1_offset, -127, 128) || !in_range(p->input2_offset, -127, 128) ||
        p->left_shift > 21 || p->input1_multiplier < 0 || p->input2_multiplier < 0 ||
        p->output_multiplier < 0 || !in_range(p->output_offset, -128, 127)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_mul_s8(nnrt_blob_call_t *c, const nnrt_mul_s8_params_t *p)
{
    if (nnrt_mul_s8_check(p) != NNRT_OK || !bcast_ok(&p->bcast, c->args, NNRT_INT8, 1) ||
        !in_range(p->input1_offset, -127, 128) || !in_range(p->input2_offset, -127, 128) ||
        p->output_multiplier < 0 || !in_range(p->output_offset, -128, 127)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_binary_f32(nnrt_blob_call_t *c,
                                         const nnrt_binary_f32_params_t *p)
{
    return nnrt_binary_f32_check(p) == NNRT_OK && bcast_ok(&p->bcast, c->args, NNRT_FLOAT32, 4)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* int16 ADD/SUB (left shift 15) and MUL: the int16 ranges of the offsets */
nnrt_status_t nnrt_blob_check_add_s16(nnrt_blob_call_t *c, const nnrt_add_s8_params_t *p)
{
    if (nnrt_add_s16_check(p) != NNRT_OK || !bcast_ok(&p->bcast, c->args, NNRT_INT16, 2) ||
        p->input1_multiplier < 0 || p->input2_multiplier < 0 || p->output_multiplier < 0 ||
        !in_range(p->output_offset, INT16_MIN, INT16_MAX)) {
        return NNRT_ERR_FORMAT;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_blob_check_mul_s16(nnrt_blob_call_t *c, const nnrt_mul_s8_params_t *p)
{
    return nnrt_mul_s16_check(p) == NNRT_OK && bcast_ok(&p->bcast, c->args, NNRT_INT16, 2) &&
                   p->output_multiplier >= 0
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* int32 ADD/MUL: wrapping arithmetic, the int32 activation range */
nnrt_status_t nnrt_blob_check_binary_s32(nnrt_blob_call_t *c,
                                         const nnrt_binary_s32_params_t *p)
{
    return nnrt_binary_s32_check(p) == NNRT_OK && bcast_ok(&p->bcast, c->args, NNRT_INT32, 4)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}

/* MAXIMUM / MINIMUM: the element type is the kernel's */
nnrt_status_t nnrt_blob_check_minmax(nnrt_blob_call_t *c, const nnrt_broadcast_t *p)
{
    nnrt_dtype_t dt;
    uint32_t size;

    switch (c->kernel) {
    case NNRT_BLOB_K_MAXIMUM_S8:
    case NNRT_BLOB_K_MINIMUM_S8:
        dt = NNRT_INT8;
        size = 1u;
        break;
    case NNRT_BLOB_K_MAXIMUM_S16:
    case NNRT_BLOB_K_MINIMUM_S16:
        dt = NNRT_INT16;
        size = 2u;
        break;
    case NNRT_BLOB_K_MAXIMUM_S32:
    case NNRT_BLOB_K_MINIMUM_S32:
        dt = NNRT_INT32;
        size = 4u;
        break;
    case NNRT_BLOB_K_MAXIMUM_S64:
    case NNRT_BLOB_K_MINIMUM_S64:
        dt = NNRT_INT64;
        size = 8u;
        break;
    default:
        dt = NNRT_FLOAT32;
        size = 4u;
        break;
    }
    return nnrt_broadcast_check(p) == NNRT_OK && bcast_ok(p, c->args, dt, size)
               ? NNRT_OK : NNRT_ERR_FORMAT;
}
