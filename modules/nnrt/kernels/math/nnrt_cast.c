/*
 * CAST, TFLM's cast.cc: out[i] = static_cast<To>(in[i]) (no quantisation involved),
 * from int8, int16, int32, uint32, float32 or bool to int8, int16, int32, uint32 or
 * float32. Beyond TFLM, the conversions nnopt puts at a model's boundary (an ONNX model's
 * int64 or float64 inputs and outputs): int64 -> int32 and float64 -> float32 checked
 * (NNRT_ERR_ARG, output unspecified, if a value does not fit: an int64 outside int32's
 * range, a finite float64 beyond float32's), int32 -> int64 and float32 -> float64
 * exact. Element i is read before it is written: in place over an input of the same
 * element size (a widening cast is never in place).
 */
#include <float.h>
#include <stdbool.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"

#define CAST_LOOP(FROM, TO)                                                                  \
    do {                                                                                     \
        const FROM *in_ = (const FROM *)input;                                               \
        TO *out_ = (TO *)output;                                                             \
        for (int32_t i_ = 0; i_ < size; ++i_) {                                              \
            out_[i_] = (TO)in_[i_];                                                          \
        }                                                                                    \
    } while (0)

#define CAST_TO(FROM)                                                                        \
    switch (to) {                                                                            \
    case NNRT_INT8: CAST_LOOP(FROM, int8_t); return NNRT_OK;                                 \
    case NNRT_INT16: CAST_LOOP(FROM, int16_t); return NNRT_OK;                               \
    case NNRT_INT32: CAST_LOOP(FROM, int32_t); return NNRT_OK;                               \
    case NNRT_UINT32: CAST_LOOP(FROM, uint32_t); return NNRT_OK;                             \
    case NNRT_FLOAT32: CAST_LOOP(FROM, float); return NNRT_OK;                               \
    default: return NNRT_ERR_ARG;                                                            \
    }

static nnrt_status_t cast_s64_s32(const int64_t *in, int32_t *out, int32_t size)
{
    for (int32_t i = 0; i < size; ++i) {
        if (in[i] < INT32_MIN || in[i] > INT32_MAX) {
            return NNRT_ERR_ARG;
        }
        out[i] = (int32_t)in[i];
    }
    return NNRT_OK;
}

static nnrt_status_t cast_f64_f32(const double *in, float *out, int32_t size)
{
    for (int32_t i = 0; i < size; ++i) {
        const double v = in[i];
        /* NaN and the infinities pass; a finite value float32 cannot hold is refused */
        if ((v > (double)FLT_MAX && v <= DBL_MAX) || (v < -(double)FLT_MAX && v >= -DBL_MAX)) {
            return NNRT_ERR_ARG;
        }
        out[i] = (float)v;
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_cast(nnrt_dtype_t from, nnrt_dtype_t to, const void *input, void *output,
                        int32_t size)
{
    if (input == NULL || output == NULL || size < 0) {
        return NNRT_ERR_ARG;
    }
    switch (from) {
    case NNRT_INT8: CAST_TO(int8_t)
    case NNRT_INT16: CAST_TO(int16_t)
    case NNRT_INT32:
        if (to == NNRT_INT64) {
            CAST_LOOP(int32_t, int64_t);
            return NNRT_OK;
        }
        CAST_TO(int32_t)
    case NNRT_UINT32: CAST_TO(uint32_t)
    case NNRT_FLOAT32:
        if (to == NNRT_FLOAT64) {
            CAST_LOOP(float, double);
            return NNRT_OK;
        }
        CAST_TO(float)
    case NNRT_BOOL: CAST_TO(bool)
    case NNRT_INT64:
        return to == NNRT_INT32 ? cast_s64_s32((const int64_t *)input, (int32_t *)output, size)
                                : NNRT_ERR_ARG;
    case NNRT_FLOAT64:
        return to == NNRT_FLOAT32 ? cast_f64_f32((const double *)input, (float *)output, size)
                                  : NNRT_ERR_ARG;
    default: return NNRT_ERR_ARG;
    }
}
