/*
 * SPACE_TO_BATCH_ND, as TFLM's reference SpaceToBatchND: every output pixel is one input
 * pixel moved whole, or the padding byte where the padded block grid leaves the input.
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

nnrt_status_t nnrt_space_to_batch_x8(const nnrt_space_to_batch_params_t *params,
                                     const void *input, void *output)
{
    if (params == NULL || input == NULL || output == NULL || params->batches < 1
        || params->input_h < 1 || params->input_w < 1 || params->output_h < 1
        || params->output_w < 1 || params->block_h < 1 || params->block_w < 1
        || params->pad_top < 0 || params->pad_left < 0 || params->pixel_bytes < 1
        || params->pad_byte < 0 || params->pad_byte > 255) {
        return NNRT_ERR_ARG;
    }
    const size_t px = (size_t)params->pixel_bytes;
    const size_t in_row = (size_t)params->input_w * px;
    const size_t in_image = (size_t)params->input_h * in_row;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    const int32_t blocks = params->block_h * params->block_w;
    for (int32_t k = 0; k < blocks; ++k) {
        const int32_t sh = k / params->block_w;
        const int32_t sw = k % params->block_w;
        for (int32_t b = 0; b < params->batches; ++b) {
            const uint8_t *image = in + (size_t)b * in_image;
            for (int32_t oh = 0; oh < params->output_h; ++oh) {
                const int32_t ih = oh * params->block_h + sh - params->pad_top;
                for (int32_t ow = 0; ow < params->output_w; ++ow) {
                    const int32_t iw = ow * params->block_w + sw - params->pad_left;
                    if (ih < 0 || ih >= params->input_h || iw < 0 || iw >= params->input_w) {
                        memset(out, params->pad_byte, px);
                    } else {
                        memcpy(out, image + (size_t)ih * in_row + (size_t)iw * px, px);
                    }
                    out += px;
                }
            }
        }
    }
    return NNRT_OK;
}
