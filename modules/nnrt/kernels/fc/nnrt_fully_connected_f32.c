/*
 * float32 fully connected, in the summation order of TFLM's reference FullyConnected
 * (see fc.h): each output's products are added to one accumulator in input order,
 * then the bias. Four outputs run side by side over the input (nnrt_dot4_f32: each
 * input value read once for the four weight rows; VLDM blocks on an FPU core): each
 * accumulator still sees the same additions in the same order as the one-output loop.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"

#include "../internal/dot_f32.h"

/* Clamp and store one output: total + bias, within [act_min, act_max]. */
static inline float fc_out(float total, const float *bias, int32_t o, float act_min,
                           float act_max)
{
    float v = total + (bias != NULL ? bias[o] : 0.0f);
    v = v < act_min ? act_min : v;
    return act_max < v ? act_max : v;
}

/* The dot product of x and w over depth, in order (the reference's loop). */
static inline float fc_dot1(const float *x, const float *w, int32_t depth)
{
    float total = 0.0f;
    for (int32_t d = 0; d < depth; ++d) {
        total += x[d] * w[d];
    }
    return total;
}

nnrt_status_t nnrt_fully_connected_f32(const nnrt_fc_f32_params_t *params, const float *input,
                                       const float *weights, const float *bias, float *output)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL
        || NNRT_FC_F32_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
    const int32_t depth = params->accum_depth;
    const int32_t units = params->output_depth;
    const float act_min = params->act_min;
    const float act_max = params->act_max;

    for (int32_t b = 0; b < params->batches; ++b) {
        const float *x = input + (size_t)b * (size_t)depth;
        int32_t o = 0;
        for (; o + 4 <= units; o += 4) {
            const float *w0 = weights + (size_t)o * (size_t)depth;
            const float *const w[4] = {w0, w0 + depth, w0 + 2 * depth, w0 + 3 * depth};
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            nnrt_dot4_f32(x, w, depth, t, 1);
            for (int32_t j = 0; j < 4; ++j) {
                output[o + j] = fc_out(t[j], bias, o + j, act_min, act_max);
            }
        }
        for (; o < units; ++o) {
            output[o] = fc_out(fc_dot1(x, weights + (size_t)o * (size_t)depth, depth), bias, o,
                               act_min, act_max);
        }
        output += units;
    }
    return NNRT_OK;
}
