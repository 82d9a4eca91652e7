/*
 * float32 FLOOR_DIV with broadcasting, TFLM's reference FloorDiv: floor of the quotient
 * computed in double, converted to float. Like TFLM, a zero anywhere in the divisor is
 * an error (NNRT_ERR_ARG) before anything is written. Each element is written after its
 * inputs are read (in place over a same-sized input).
 */
#include <math.h>
#include <stddef.h>

#include "nnrt/kernels/math.h"
#include "../internal/binary.h"

#define FLOOR_DIV(x, y) ((float)floor((double)(x) / (double)(y)))

nnrt_status_t nnrt_floor_div_f32(const nnrt_broadcast_t *bcast, const float *input1,
                                 const float *input2, int32_t input2_size, float *output)
{
    if (bcast == NULL || input1 == NULL || input2 == NULL || output == NULL
        || !nnrt_broadcast_valid(bcast) || input2_size < 0) {
        return NNRT_ERR_ARG;
    }
    for (int32_t i = 0; i < input2_size; ++i) {
        if (input2[i] == 0.0f) {
            return NNRT_ERR_ARG;
        }
    }
    const nnrt_broadcast_t *b = bcast;
    NNRT_BINARY_ELEMENTS(float, b, input1, input2, output, FLOOR_DIV);
    return NNRT_OK;
}
