/*
 * Internal to the nnrt kernels: int8 dot products against one input vector, with the
 * input offset applied on the fly (no scratch): the fully connected layer and the
 * convolutions that have no scratch (nnrt_conv2d_s8) use them.
 */
#ifndef NNRT_KERNELS_INTERNAL_DOT_H_
#define NNRT_KERNELS_INTERNAL_DOT_H_

#include <stdint.h>

/**
 * acc[r] += sum_{d < n} w[r * w_stride + d] * (x[d] + input_offset) for r < 3.
 * DSP cores: per 4 inputs one word turned into two offset-added int16 pairs, shared
 * by the three rows (two SMLAD each).
 */
void nnrt_dot3_s8(const int8_t *x, const int8_t *w, int32_t w_stride, int32_t n,
                  int32_t input_offset, int32_t acc[3]);

/** sum_{d < n} w[d] * (x[d] + input_offset) + acc. */
int32_t nnrt_dot1_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t input_offset,
                     int32_t acc);

/**
 * acc[r] += sum_{d < n} w[r * w_stride + d] * x[d] for r < 3, x an input row with its
 * offset already added (int16). For cores without the DSP extension, where adding the
 * offset costs one instruction per input and call: a caller that takes several calls
 * over one input row adds it once (nnrt_lstm_s8's gate FCs on the Cortex-M3).
 */
void nnrt_dot3_s16x8(const int16_t *x, const int8_t *w, int32_t w_stride, int32_t n,
                     int32_t acc[3]);

/** sum_{d < n} w[d] * x[d] + acc, x as for nnrt_dot3_s16x8(). */
int32_t nnrt_dot1_s16x8(const int16_t *x, const int8_t *w, int32_t n, int32_t acc);

#endif /* NNRT_KERNELS_INTERNAL_DOT_H_ */
