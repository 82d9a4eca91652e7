/* Private to src/loader: shared between the loader (loader.c) and its kernel table
 * (blob_dispatch.c, generated; the checkers of loader_check.h). The tensor table both
 * read is blob_tensor.h's. */
#ifndef NNRT_LOADER_INTERNAL_H_
#define NNRT_LOADER_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "nnrt/loader.h"

/** Most tensor arguments of any kernel in the blob format (CONCATENATION: up to
 *  NNRT_BLOB_MAX_LIST_ARGS inputs and the output). */
#define NNRT_BLOB_MAX_ARGS 16u

/** Whether @p n tensor arguments fit a kernel whose table entry says @p want. */
static inline int nnrt_blob_args_fit(uint32_t n, uint32_t want)
{
    return want == 0xFFu ? (n >= 2u && n <= NNRT_BLOB_MAX_ARGS) : n == want;
}

/** The tensor arguments of one step, resolved. */
typedef struct {
    void *ptr[NNRT_BLOB_MAX_ARGS];      /**< data (NULL: absent, or check-only) */
    uint32_t bytes[NNRT_BLOB_MAX_ARGS]; /**< tensor size in bytes */
    uint8_t dtype[NNRT_BLOB_MAX_ARGS];  /**< nnrt_dtype_t */
    uint8_t present[NNRT_BLOB_MAX_ARGS]; /**< 0: NULL argument */
    uint32_t n;                         /**< arguments used */
} nnrt_blob_args_t;

static inline uint32_t nnrt_blob_rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static inline uint32_t nnrt_blob_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/**
 * Decode a step's parameter record, check it against its tensors and, when @p run,
 * call the kernel (generated: blob_dispatch.c). With run == 0 the pointers in @p args are not used.
 * @return NNRT_OK, NNRT_ERR_FORMAT for a record that does not fit the kernel or its
 *         tensors, NNRT_ERR_UNSUPPORTED for an unknown kernel, or the kernel's status.
 */
nnrt_status_t nnrt_blob_kernel(const nnrt_loader_t *ld, uint32_t kernel, const uint8_t *rec,
                               uint32_t rec_bytes, const nnrt_blob_args_t *args, int run);

#endif /* NNRT_LOADER_INTERNAL_H_ */
