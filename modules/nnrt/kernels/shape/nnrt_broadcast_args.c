/*
 * BROADCAST_ARGS over runtime int32 or int64 shape vectors: the broadcast shape,
 * aligned at the last entry, as TFLM's reference kernel computes it (C ints).
 */
#include <string.h>

#include "nnrt/kernels/shape.h"

/* Entry i from the end of a shape vector of n entries: 1 past its start. */
static int32_t entry_from_end(const void *shape, size_t n, size_t i, size_t width)
{
    if (i >= n) {
        return 1;
    }
    const unsigned char *at = (const unsigned char *)shape + (n - 1u - i) * width;
    if (width == 4u) {
        int32_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, at, sizeof v);
    return (int32_t)v; /* TFLM's int: wraps modulo 2^32 */
}

nnrt_status_t nnrt_broadcast_args(const void *shape1, size_t n1, const void *shape2,
                                  size_t n2, void *output, size_t n, size_t width)
{
    if ((width != 4u && width != 8u) || (shape1 == NULL && n1 > 0u) ||
        (shape2 == NULL && n2 > 0u) || (output == NULL && n > 0u)) {
        return NNRT_ERR_ARG;
    }
    for (size_t i = 0; i < n; ++i) {
        int32_t a = entry_from_end(shape1, n1, i, width);
        int32_t b = entry_from_end(shape2, n2, i, width);
        if (a != b && a != 1 && b != 1) {
            return NNRT_ERR_ARG;
        }
        int32_t v = a == 1 ? b : a;
        unsigned char *to = (unsigned char *)output + (n - 1u - i) * width;
        if (width == 4u) {
            memcpy(to, &v, sizeof v);
        } else {
            int64_t w = v;
            memcpy(to, &w, sizeof w);
        }
    }
    return NNRT_OK;
}
