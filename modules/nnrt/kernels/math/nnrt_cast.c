/*
 * CAST, TFLM's cast.cc: out[i] = static_cast<To>(in[i]) (no quantisation involved),
 * from int8, int16, int32, float32 or bool to int8, int16, int32 or float32. Element
 * i is read before it is written: in place over an input of the same element size.
 */
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
    case NNRT_FLOAT32: CAST_LOOP(FROM, float); return NNRT_OK;                               \
    default: return NNRT_ERR_ARG;                                                            \
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
    case NNRT_INT32: CAST_TO(int32_t)
    case NNRT_FLOAT32: CAST_TO(float)
    case NNRT_BOOL: CAST_TO(bool)
    default: return NNRT_ERR_ARG;
    }
}
