/* QUANTIZE between integer types (TFLM reference_ops::Requantize<In, Out>). */
#include "nnrt/kernels/quant.h"
#include "nnrt/kernels/quantize.h"
#include "../internal/requant.h"

/* Element size in bytes of the integer types handled here, 0 for the others. */
static size_t int_size(nnrt_dtype_t t)
{
    switch (t) {
    case NNRT_INT8:
    case NNRT_UINT8:
        return 1;
    case NNRT_INT16:
        return 2;
    case NNRT_INT32:
        return 4;
    default:
        return 0;
    }
}

static int pair_supported(nnrt_dtype_t in, nnrt_dtype_t out)
{
    switch (in) {
    case NNRT_INT8:
        return out == NNRT_INT8 || out == NNRT_UINT8 || out == NNRT_INT16 ||
               out == NNRT_INT32;
    case NNRT_UINT8:
        return out == NNRT_INT8;
    case NNRT_INT16:
        return out == NNRT_INT8 || out == NNRT_INT16 || out == NNRT_INT32;
    case NNRT_INT32:
        return out == NNRT_INT8 || out == NNRT_INT16;
    default:
        return 0;
    }
}

static int32_t load(const void *p, nnrt_dtype_t t, int32_t i)
{
    switch (t) {
    case NNRT_INT8:
        return ((const int8_t *)p)[i];
    case NNRT_UINT8:
        return ((const uint8_t *)p)[i];
    case NNRT_INT16:
        return ((const int16_t *)p)[i];
    default:
        return ((const int32_t *)p)[i];
    }
}

static void store(void *p, nnrt_dtype_t t, int32_t i, int32_t v)
{
    switch (t) {
    case NNRT_INT8:
        ((int8_t *)p)[i] = (int8_t)nnrt_clamp_i32(v, INT8_MIN, INT8_MAX);
        break;
    case NNRT_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)nnrt_clamp_i32(v, 0, UINT8_MAX);
        break;
    case NNRT_INT16:
        ((int16_t *)p)[i] = (int16_t)nnrt_clamp_i32(v, INT16_MIN, INT16_MAX);
        break;
    default:
        ((int32_t *)p)[i] = v;
        break;
    }
}

static int zero_point_fits(nnrt_dtype_t t, int32_t zp)
{
    switch (t) {
    case NNRT_INT8:
        return zp >= INT8_MIN && zp <= INT8_MAX;
    case NNRT_UINT8:
        return zp >= 0 && zp <= UINT8_MAX;
    case NNRT_INT16:
        return zp >= INT16_MIN && zp <= INT16_MAX;
    default:
        return 1;
    }
}

nnrt_status_t nnrt_requantize(const nnrt_requantize_params_t *params, const void *input,
                              nnrt_dtype_t input_type, void *output,
                              nnrt_dtype_t output_type, int32_t size)
{
    if (input == NULL || output == NULL || params == NULL || size < 0 ||
        params->multiplier < 0 || params->shift < -31 || params->shift > 30) {
        return NNRT_ERR_ARG;
    }
    if (!pair_supported(input_type, output_type)) {
        return NNRT_ERR_UNSUPPORTED;
    }
    if (!zero_point_fits(input_type, params->input_zero_point) ||
        !zero_point_fits(output_type, params->output_zero_point)) {
        return NNRT_ERR_ARG;
    }
    const int32_t in_zp = params->input_zero_point;
    const int32_t out_zp = params->output_zero_point;
    const int32_t mult = params->multiplier;
    const int shift = (int)params->shift;
    if (input_type == NNRT_INT16 && output_type == NNRT_INT8) {
        /* the int16 -> int8 of quantised audio front ends, without the per-element type
         * dispatch: the same arithmetic (internal/requant.h) */
        const int16_t *x = (const int16_t *)input;
        int8_t *y = (int8_t *)output;
        nnrt_rqf_t q;

        nnrt_rqf_init(&q, mult, shift);
        for (int32_t i = 0; i < size; ++i) {
            y[i] = (int8_t)nnrt_sat8(nnrt_rqf((int32_t)x[i] - in_zp, &q, out_zp));
        }
        return NNRT_OK;
    }
    /* In place with a wider output: walk backward so that no input is overwritten
     * before it is read. */
    const int backward = int_size(output_type) > int_size(input_type);
    for (int32_t k = 0; k < size; ++k) {
        const int32_t i = backward ? size - 1 - k : k;
        /* int32 arithmetic wraps as in TFLM (int32 inputs far from the zero point) */
        const int32_t x = (int32_t)((uint32_t)load(input, input_type, i) - (uint32_t)in_zp);
        const int32_t y = (int32_t)((uint32_t)nnrt_multiply_by_quantized_multiplier(
                                        x, mult, shift) + (uint32_t)out_zp);
        store(output, output_type, i, y);
    }
    return NNRT_OK;
}
