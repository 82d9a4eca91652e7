/*
 * int8 fully connected. Arithmetic of TFLM's reference FullyConnected /
 * FullyConnectedPerChannel (see fc.h). Three units at a time share each input word:
 * on DSP cores SXTAB16 turns 4 inputs into two offset-added int16 pairs once, and per
 * unit one weight word gives two SMLAD (4 MACs); elsewhere the same blocking in
 * portable C (three units: a fourth would not fit the registers). Requantisation
 * once per output (internal/requant.h). Asymmetric per-tensor weights
 * (weights_offset != 0, rare) take a plain loop.
 */
#include <stddef.h>

#include "nnrt/kernels/fc.h"

#include "../internal/fc_body.h"
#include "../cmsis/nnrt_cmsis.h"

nnrt_status_t nnrt_fully_connected_s8(const nnrt_fc_s8_params_t *params, const int8_t *input,
                                      const int8_t *weights, const int32_t *bias,
                                      int8_t *output)
{
    if (params == NULL || input == NULL || weights == NULL || output == NULL
        || NNRT_FC_S8_PARAMS_BAD(params)) {
        return NNRT_ERR_ARG;
    }
#if NNRT_CMSIS_NN_ENABLED
    if (nnrt_cmsis_fully_connected_s8(params, input, weights, bias, output)) {
        return NNRT_OK;
    }
#endif
    nnrt_fc_body(params, input, weights, bias, output, 0);
    return NNRT_OK;
}
