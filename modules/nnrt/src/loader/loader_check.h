/*
 * Private to src/loader: what the generated kernel table (blob_dispatch.c, from
 * scripts/nnopt/blob/schema.py) and the hand-written checkers of each kernel family
 * (loader_<family>.c) share: the state of one kernel call being decoded, the record
 * decoder, and the checks common to several families.
 *
 * The checks are what makes a crafted blob harmless: every extent a kernel loops over
 * is bounded by the bytes of the buffer it indexes, every value the kernels use as a
 * shift or an offset is in the documented range, and geometry is bounded so that no
 * coordinate computation overflows int32. A checker first calls the kernel's own
 * argument check (nnrt_*_check() of nnrt/kernels/, the kernel's "Prepare"), then adds
 * what only the loader knows: the tensors' sizes and the loader's tighter bounds.
 */
#ifndef NNRT_LOADER_CHECK_H_
#define NNRT_LOADER_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include "blob_schema.h"
#include "loader_internal.h"

/* Coordinates in kernels stay within +-2^30. */
#define NNRT_BLOB_GEOM_MAX 0xFFFF
#define NNRT_BLOB_COORD_MAX ((int64_t)1 << 30)
/* int32 accumulators cannot overflow before the bias: taps x 255 x 255 < 2^31. */
#define NNRT_BLOB_MAX_TAPS 32768
/* Average pools sum a window of int8 (or float) values in int32. */
#define NNRT_BLOB_MAX_WINDOW ((int64_t)1 << 22)

/** Most `ref` fields of one record, and most scalar arguments of one kernel. */
#define NNRT_BLOB_MAX_REFS 2u
#define NNRT_BLOB_MAX_SCALARS 4u

/** A scalar argument of a kernel, as read from the record. */
typedef union {
    int32_t i;
    uint32_t u;
    float f;
} nnrt_blob_scalar_t;

/** One kernel call being decoded, checked and run. */
typedef struct {
    const nnrt_loader_t *ld;
    const nnrt_blob_args_t *args; /**< the tensor arguments */
    uint32_t kernel;              /**< kernel id (NNRT_BLOB_K_*) */
    int run;                      /**< 0: check only (args' pointers: constants only) */
    const uint8_t *rec;           /**< the parameter record */
    uint32_t words;               /**< words in the record */
    uint32_t pos;                 /**< next word */
    uint32_t ref_count[NNRT_BLOB_MAX_REFS]; /**< elements of each `ref` field, in order */
    uint32_t n_refs;
    uint32_t opt;                 /**< value of the last `opt` field (0/1) */
    nnrt_blob_scalar_t sc[NNRT_BLOB_MAX_SCALARS]; /**< the kernel's scalar arguments */
} nnrt_blob_call_t;

void nnrt_blob_call_init(nnrt_blob_call_t *c, const nnrt_loader_t *ld, uint32_t kernel,
                         const uint8_t *rec, uint32_t rec_bytes, const nnrt_blob_args_t *args,
                         int run);

/** Decode @p n fields (a table of blob_schema.h) of the record into @p out. */
nnrt_status_t nnrt_blob_decode(nnrt_blob_call_t *c, const nnrt_blob_field_t *f, uint32_t n,
                               void *out);

/** Read the kernel's @p n scalar arguments into c->sc. */
nnrt_status_t nnrt_blob_scalars(nnrt_blob_call_t *c, uint32_t n);

static inline int nnrt_blob_in_range(int32_t v, int32_t lo, int32_t hi)
{
    return v >= lo && v <= hi;
}

/** Tensor k present, of dtype, holding at least `elems` elements of `size` bytes. */
static inline int nnrt_blob_holds(const nnrt_blob_args_t *a, uint32_t k, nnrt_dtype_t dtype,
                                  uint64_t elems, uint32_t size)
{
    return a->present[k] && a->dtype[k] == (uint8_t)dtype &&
           elems * size <= (uint64_t)a->bytes[k];
}

/** The last tap of an axis of a window stays within the coordinate bound. */
static inline int nnrt_blob_axis_ok(int32_t out, int32_t stride, int32_t filter,
                                    int32_t dilation, int32_t pad)
{
    return (int64_t)(out - 1) * stride + (int64_t)(filter - 1) * dilation + pad <=
           NNRT_BLOB_COORD_MAX;
}

/** Every int32 field of a struct of @p words words in 0..NNRT_BLOB_GEOM_MAX. */
int nnrt_blob_geom_fields_ok(const void *geom, size_t words);

/**
 * No int32 accumulator can overflow, whatever the input values: for every output
 * channel, 256 * sum(|w + w_off|) over its taps plus |bias| stays below 2^31. Weights
 * of channel c are at w[c * c_stride + t * t_stride], t < taps. O(weights): done when
 * the blob is checked, not on every inference.
 */
int nnrt_blob_accumulators_ok(const int8_t *w, uint32_t channels, uint32_t taps,
                              size_t c_stride, size_t t_stride, int32_t w_off,
                              const int32_t *bias);

/** Per-channel requantisation: multipliers >= 0, shifts in -31..30. */
int nnrt_blob_requant_ok(const int32_t *mult, const int32_t *shift, uint32_t n);

/**
 * A walk over `rank` dims with non-negative strides: the number of points, or 0 when
 * a field is out of range; `*last` receives the largest offset it reaches. Every
 * extent times its stride stays below 2^30, so kernels' ptrdiff_t arithmetic (32 bits
 * on Cortex-M) cannot overflow.
 */
uint64_t nnrt_blob_walk(int32_t rank, const int32_t *dims, const int32_t *strides,
                        uint64_t *last);

#endif /* NNRT_LOADER_CHECK_H_ */
