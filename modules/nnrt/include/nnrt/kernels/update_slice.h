/**
 * @file update_slice.h
 * @brief DYNAMIC_UPDATE_SLICE: the operand with a block overwritten by the update, at
 *        start indices read at run time (XLA's DynamicUpdateSlice, as TFLM's kernel).
 *
 * Type-agnostic (`_x8`: elements moved as bytes). Extents are in elements, the element
 * size in bytes; the innermost dimension is contiguous.
 */
#ifndef NNRT_KERNELS_UPDATE_SLICE_H_
#define NNRT_KERNELS_UPDATE_SLICE_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/defs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Shapes of one DYNAMIC_UPDATE_SLICE (operand and output share one shape). */
typedef struct {
    int32_t rank;                          /**< 1..NNRT_MAX_DIMS */
    int32_t elem_size;                     /**< bytes per element: 1, 2 or 4 */
    int32_t operand_dims[NNRT_MAX_DIMS];   /**< operand (= output) extents */
    int32_t update_dims[NNRT_MAX_DIMS];    /**< update extents, each <= the operand's */
} nnrt_update_slice_params_t;

/**
 * Check a descriptor once (prepare()): rank 1..NNRT_MAX_DIMS, element size 1, 2 or 4,
 * extents >= 0 and every update extent at most the operand's.
 * @return NNRT_OK or NNRT_ERR_ARG.
 */
nnrt_status_t nnrt_update_slice_check(const nnrt_update_slice_params_t *params);

/**
 * output = operand with the update written from `start` (one int32 per dimension),
 * each start clamped to [0, operand_dim - update_dim] as TFLM clamps it. The output may
 * be the operand itself (in place: the operand copy is then skipped), never the update.
 * @return NNRT_OK, or NNRT_ERR_ARG for NULL pointers or a descriptor the check refuses.
 */
nnrt_status_t nnrt_dynamic_update_slice_x8(const nnrt_update_slice_params_t *params,
                                           const void *operand, const void *update,
                                           const int32_t *start, void *output);

#ifdef __cplusplus
}
#endif

#endif /* NNRT_KERNELS_UPDATE_SLICE_H_ */
