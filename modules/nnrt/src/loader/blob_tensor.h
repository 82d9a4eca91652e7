/* Private to src/loader: the blob's tensor table, read by the loader (loader.c) and by
 * the record decoder (loader_decode.c) alike. It depends on nothing else of the loader,
 * so neither side calls back into the other. */
#ifndef NNRT_BLOB_TENSOR_H_
#define NNRT_BLOB_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "blob_schema.h"
#include "nnrt/loader.h"

/** The record of tensor @p t (the caller has checked t < ld->n_tensors). */
static inline const uint8_t *nnrt_blob_tensor_rec(const nnrt_loader_t *ld, uint32_t t)
{
    return ld->tensors + (size_t)t * NNRT_BLOB_TENSOR_BYTES;
}

/**
 * A constant int32 tensor referenced by a parameter record.
 * @return NNRT_OK with its data and element count, or NNRT_ERR_FORMAT.
 */
nnrt_status_t nnrt_blob_const_i32(const nnrt_loader_t *ld, uint32_t tensor, const int32_t **data,
                                  uint32_t *count);

#endif /* NNRT_BLOB_TENSOR_H_ */
