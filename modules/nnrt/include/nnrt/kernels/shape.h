/**
 * @file shape.h
 * @brief Data movement: CONCATENATION, PAD/PADV2, TRANSPOSE, SLICE, STRIDED_SLICE, the
 *        layout operators (DEPTH_TO_SPACE, SPACE_TO_DEPTH, REVERSE_V2, BROADCAST_TO,
 *        MIRROR_PAD, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, FILL, ZEROS_LIKE, SHAPE),
 *        BROADCAST_ARGS and the copy fallback of RESHAPE/SQUEEZE/EXPAND_DIMS.
 *
 * These operators move elements without arithmetic, so the kernels are type-agnostic
 * (`_x8`: any element type, moved as bytes). `nnopt.lowering.shape` folds the element
 * size into the descriptors: extents and strides below are in bytes unless stated, and
 * adjacent dimensions that move together are merged, so any TFLite rank fits.
 * Semantics follow TensorFlow Lite Micro's reference kernels (index resolution of
 * begin/end/masks happens at build time).
 */
#ifndef NNRT_KERNELS_SHAPE_H_
#define NNRT_KERNELS_SHAPE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * CONCATENATION as `outer` rounds of one contiguous block per input.
 *
 * For a concatenation along axis a of inputs shaped `[d0..d(a-1), k_i, ...]`,
 * outer = d0*...*d(a-1) and block_bytes[i] = k_i * (product of the dims after a) *
 * element size.
 */
typedef struct {
    int32_t outer;               /**< >= 1 */
    int32_t num_inputs;          /**< >= 1 */
    const int32_t *block_bytes;  /**< [num_inputs] bytes copied from input i per round, >= 0 */
} nnrt_concat_params_t;

/**
 * Concatenate: output = for each round r, for each input i, block r of input i.
 * Not in place (the output must not overlap any input).
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or invalid sizes.
 */
nnrt_status_t nnrt_concat_x8(const nnrt_concat_params_t *params, const void *const *inputs,
                             void *output);

/** The argument check of nnrt_concat_x8() (its Prepare): outer >= 1, num_inputs >= 1,
 *  block_bytes set and each >= 0. NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_concat_check(const nnrt_concat_params_t *params);

/**
 * SPLIT / SPLIT_V / UNPACK as `outer` rows of one contiguous block per output.
 *
 * For a split along axis a of an input shaped `[d0..d(a-1), sum k_i, ...]`,
 * outer = d0*...*d(a-1) and block_bytes[i] = k_i * (product of the dims after a) *
 * element size (UNPACK: k_i = 1).
 */
typedef struct {
    int32_t outer;               /**< >= 1 */
    int32_t num_outputs;         /**< >= 1 */
    const int32_t *block_bytes;  /**< [num_outputs] bytes of output i per row, >= 0 */
} nnrt_split_params_t;

/**
 * Split: for each row r, block r of output i is the i-th block of input row r.
 * With one row, an output placed at its own block of the input (a view the planner
 * made) is left as it is; no other output may overlap the input.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or invalid sizes.
 */
nnrt_status_t nnrt_split_x8(const nnrt_split_params_t *params, const void *input,
                            void *const *outputs);

/**
 * GATHER along an axis (TFLM's reference Gather, int32 coordinates): the input is
 * [batch, outer, axis_size, inner], the coordinates [batch, coord_size], the output
 * [batch, outer, coord_size, inner]; inner_bytes = inner elements * element size.
 */
typedef struct {
    int32_t batch;        /**< product of the batch_dims leading dims, >= 1 */
    int32_t outer;        /**< product of the dims between batch_dims and the axis, >= 1 */
    int32_t axis_size;    /**< extent of the axis, >= 1 */
    int32_t coord_size;   /**< coordinates per batch, >= 0 */
    int32_t inner_bytes;  /**< bytes of one block after the axis, >= 0 */
} nnrt_gather_params_t;

/**
 * Gather blocks of `input` at `coords`. Not in place.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers, invalid sizes or a coordinate
 *         outside [0, axis_size) (as TFLM fails).
 */
nnrt_status_t nnrt_gather_x8(const nnrt_gather_params_t *params, const void *input,
                             const int32_t *coords, void *output);

/**
 * GATHER_ND (TFLM's reference GatherNd, int32 indices [n_slices, nd]): output slice i
 * (slice_bytes) is the input at byte offset sum_j indices[i][j] * strides[j].
 */
typedef struct {
    int32_t n_slices;                /**< number of index tuples, >= 0 */
    int32_t nd;                      /**< indices per tuple, 1..NNRT_MAX_DIMS */
    int32_t dims[NNRT_MAX_DIMS];     /**< extents of the input's first nd dims */
    int32_t strides[NNRT_MAX_DIMS];  /**< their byte strides */
    int32_t slice_bytes;             /**< bytes of one gathered slice, >= 0 */
} nnrt_gather_nd_params_t;

/**
 * Gather the slices at `indices`. Not in place.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers, invalid sizes or an index out of
 *         its dimension's range.
 */
nnrt_status_t nnrt_gather_nd_x8(const nnrt_gather_nd_params_t *params, const void *input,
                                const int32_t *indices, void *output);

/** Maximum rank of a PAD descriptor after merging. */
#define NNRT_PAD_MAX_DIMS NNRT_MAX_DIMS

/**
 * PAD/PADV2: a constant border around an N-d tensor.
 *
 * Extents and paddings are in elements; the innermost dimension is contiguous. The
 * output extent of dim d is before[d] + input_dims[d] + after[d].
 */
typedef struct {
    int32_t rank;                          /**< 1..NNRT_PAD_MAX_DIMS */
    int32_t elem_size;                     /**< bytes per element: 1, 2 or 4 */
    int32_t input_dims[NNRT_PAD_MAX_DIMS]; /**< input extents, >= 1 */
    int32_t before[NNRT_PAD_MAX_DIMS];     /**< leading padding, >= 0 */
    int32_t after[NNRT_PAD_MAX_DIMS];      /**< trailing padding, >= 0 */
} nnrt_pad_params_t;

/**
 * Pad `input` into `output` with the element at `pad_value` (elem_size bytes: the
 * output zero point for int8 PAD, the constant for PADV2, 0.0f for float PAD).
 * Not in place. @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_pad_x8(const nnrt_pad_params_t *params, const void *input,
                          const void *pad_value, void *output);

/** The argument check of nnrt_pad_x8() (its Prepare): rank 1..NNRT_PAD_MAX_DIMS,
 *  elem_size 1, 2 or 4, input_dims >= 1, paddings >= 0. NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_pad_check(const nnrt_pad_params_t *params);

/**
 * A strided view of the input copied out densely: TRANSPOSE, SLICE, STRIDED_SLICE.
 *
 * The output is written contiguously in row-major order over `dims` (elements); output
 * element (i0..i(r-1)) is read from input byte offset `offset + sum(i_d * strides[d])`.
 * Strides are in bytes and may be negative (reversed strided slices) or anything else
 * (transposes).
 */
typedef struct {
    int32_t rank;                    /**< 1..NNRT_MAX_DIMS */
    int32_t elem_size;               /**< bytes per element: 1, 2 or 4 */
    int32_t offset;                  /**< byte offset of output element 0 in the input, >= 0 */
    int32_t dims[NNRT_MAX_DIMS];     /**< output extents, >= 1 */
    int32_t strides[NNRT_MAX_DIMS];  /**< input byte stride of each output dim */
} nnrt_strided_copy_params_t;

/**
 * Gather the strided view into `output`. Not in place (output must not overlap input).
 * @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_strided_copy_x8(const nnrt_strided_copy_params_t *params, const void *input,
                                   void *output);

/** The argument check of nnrt_strided_copy_x8() (its Prepare): rank 1..NNRT_MAX_DIMS,
 *  elem_size 1, 2 or 4, offset >= 0, dims >= 1. NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_strided_copy_check(const nnrt_strided_copy_params_t *params);

/**
 * A view whose input offset is a sum of one table entry per output dimension:
 * MIRROR_PAD (reflected indices), BATCH_TO_SPACE_ND (each output row/column comes from
 * a row/column of one input batch), and any other gather that is separable per axis.
 *
 * The output is written contiguously in row-major order over `dims`; output element
 * (i0..i(r-1)) is read from input byte offset `offsets[i0] + offsets[dims[0] + i1] +
 * ...`: `offsets` holds dims[0] + ... + dims[rank-1] byte offsets, the table of dim 0
 * first. An innermost table of consecutive elements is copied with one memcpy per row.
 */
typedef struct {
    int32_t rank;                 /**< 1..NNRT_MAX_DIMS */
    int32_t elem_size;            /**< bytes per element: 1, 2 or 4 */
    int32_t dims[NNRT_MAX_DIMS];  /**< output extents, >= 1 */
    const int32_t *offsets;       /**< [sum(dims)] input byte offsets, >= 0 */
} nnrt_gather_axes_params_t;

/**
 * Gather the per-axis view into `output`. Not in place. Offsets are not range-checked
 * against the input: the lowering builds them inside it.
 * @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_gather_axes_x8(const nnrt_gather_axes_params_t *params, const void *input,
                                  void *output);

/**
 * SPACE_TO_BATCH_ND on [N, H, W, C] (a 3-D [N, H, C] input is H x 1): output batch
 * (sh * block_w + sw) * N + b, pixel (oh, ow) is input pixel (b, oh * block_h + sh -
 * pad_top, ow * block_w + sw - pad_left), or `pad_byte` in every byte outside the input
 * (TFLM memsets the output zero point, 0 for float).
 */
typedef struct {
    int32_t batches;      /**< input batches N, >= 1 */
    int32_t input_h;      /**< >= 1 */
    int32_t input_w;      /**< >= 1 */
    int32_t output_h;     /**< >= 1 */
    int32_t output_w;     /**< >= 1 */
    int32_t block_h;      /**< >= 1 */
    int32_t block_w;      /**< >= 1 */
    int32_t pad_top;      /**< >= 0 */
    int32_t pad_left;     /**< >= 0 */
    int32_t pixel_bytes;  /**< C * element size, >= 1 */
    int32_t pad_byte;     /**< 0..255 */
} nnrt_space_to_batch_params_t;

/** SPACE_TO_BATCH_ND. Not in place. @return NNRT_OK or NNRT_ERR_ARG. */
nnrt_status_t nnrt_space_to_batch_x8(const nnrt_space_to_batch_params_t *params,
                                     const void *input, void *output);

/**
 * Copy `bytes` bytes (RESHAPE/SQUEEZE/EXPAND_DIMS when the planner cannot alias the
 * output onto the input). Overlap-safe (memmove), so in place is a no-op.
 * @return NNRT_OK or NNRT_ERR_ARG for NULL pointers.
 */
nnrt_status_t nnrt_copy_x8(const void *input, void *output, size_t bytes);

/**
 * BROADCAST_ARGS of two runtime shape vectors (with constant ones the compiler writes
 * the result as a constant instead): output[n-1-i] from the i-th entries from the end
 * of `shape1` (`n1` entries) and `shape2` (`n2`), an absent entry counting as 1; an
 * entry of 1 takes the other, otherwise the two must be equal. As TFLM's
 * reference_ops::BroadcastArgs the entries are compared and written as C ints (an
 * int64 entry wraps to 32 bits, then widens back).
 * @param width element bytes of all three vectors: 4 (int32) or 8 (int64).
 * @return NNRT_OK; NNRT_ERR_ARG for NULL pointers (with entries), a width other than
 *         4 or 8, or two entries that differ with neither 1 (where TFLM aborts).
 */
nnrt_status_t nnrt_broadcast_args(const void *shape1, size_t n1, const void *shape2,
                                  size_t n2, void *output, size_t n, size_t width);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_SHAPE_H_ */
