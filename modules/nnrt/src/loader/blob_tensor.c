/*
 * The blob's tensor table (see blob_tensor.h): constant int32 tensors that parameter
 * records reference by index.
 */
#include "blob_tensor.h"

#include "loader_internal.h"

nnrt_status_t nnrt_blob_const_i32(const nnrt_loader_t *ld, uint32_t tensor, const int32_t **data,
                                  uint32_t *count)
{
    const uint8_t *r;

    if (tensor >= ld->n_tensors) {
        return NNRT_ERR_FORMAT;
    }
    r = nnrt_blob_tensor_rec(ld, tensor);
    if (r[5] != NNRT_BLOB_KIND_CONSTANT || r[4] != (uint8_t)NNRT_INT32) {
        return NNRT_ERR_FORMAT;
    }
    *data = (const int32_t *)(const void *)(ld->data + nnrt_blob_rd32(r + 8));
    *count = nnrt_blob_rd32(r) / 4u;
    return NNRT_OK;
}
