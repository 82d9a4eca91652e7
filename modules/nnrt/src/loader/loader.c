/*
 * The model blob loader: validation of the whole blob, then execution of its steps on
 * the dynamic allocator (see nnrt/loader.h and scripts/nnopt/blob/schema.py).
 *
 * Every multi-byte field is read byte by byte (little endian), every offset and count
 * is checked in 64-bit arithmetic against the blob before use, and the allocation
 * sequence is replayed once at open() on the real allocator, so invoke() can only
 * meet states the checks have already seen.
 */
#include "nnrt/loader.h"

#include <string.h>

#include "blob_schema.h"
#include "blob_tensor.h"
#include "loader_internal.h"

#define RD16(p) nnrt_blob_rd16(p)
#define RD32(p) nnrt_blob_rd32(p)
#define TENSOR_REC(ld, t) nnrt_blob_tensor_rec(ld, t)

/* ---- CRC-32 (IEEE 802.3, reflected; zlib's crc32) ---------------------------- */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    static const uint32_t table[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
        0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
        0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    size_t i;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ table[crc & 15u];
        crc = (crc >> 4) ^ table[crc & 15u];
    }
    return crc;
}

static uint32_t blob_crc(const uint8_t *b, uint32_t total)
{
    static const uint8_t zero[4] = {0, 0, 0, 0};
    uint32_t crc = 0xFFFFFFFFu;

    crc = crc32_update(crc, b, NNRT_BLOB_HDR_CRC32);
    crc = crc32_update(crc, zero, sizeof(zero));
    crc = crc32_update(crc, b + NNRT_BLOB_HDR_CRC32 + 4u, total - NNRT_BLOB_HDR_CRC32 - 4u);
    return ~crc;
}

/* ---- tables ---------------------------------------------------------------------- */
static const uint8_t *step_rec(const nnrt_loader_t *ld, uint32_t s)
{
    return ld->steps + (size_t)s * NNRT_BLOB_STEP_BYTES;
}

static const uint8_t *io_rec(const nnrt_loader_t *ld, int output, uint32_t i)
{
    return ld->io + (size_t)(output ? ld->n_inputs + i : i) * NNRT_BLOB_IO_BYTES;
}

static uint32_t list_at(const nnrt_loader_t *ld, uint32_t k)
{
    return RD16(ld->lists + 2u * (size_t)k);
}

static int in_blob(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
    return off >= lo && off <= hi && len <= hi - off;
}

/* Header, section bounds, tensor/handle/io tables. No step is looked at. */
static nnrt_status_t parse(nnrt_loader_t *ld, const void *blob, size_t bytes)
{
    const uint8_t *b = (const uint8_t *)blob;
    uint32_t total;
    uint32_t data_off;
    uint32_t i;
    uint32_t off[5];
    uint64_t len[5];
    union {
        uint32_t u;
        uint8_t c[4];
    } endian;

    endian.u = 1u;
    if (endian.c[0] != 1u) {
        return NNRT_ERR_UNSUPPORTED; /* weights are stored little endian */
    }
    if (ld == NULL || b == NULL || ((uintptr_t)b & 3u) != 0u) {
        return NNRT_ERR_ARG;
    }
    memset(ld, 0, sizeof(*ld));
    if (bytes < NNRT_BLOB_HEADER_BYTES || RD32(b + NNRT_BLOB_HDR_MAGIC) != NNRT_BLOB_MAGIC) {
        return NNRT_ERR_FORMAT;
    }
    if (RD16(b + NNRT_BLOB_HDR_VERSION) != NNRT_BLOB_FORMAT_VERSION) {
        return NNRT_ERR_UNSUPPORTED;
    }
    total = RD32(b + NNRT_BLOB_HDR_TOTAL_BYTES);
    if (RD16(b + NNRT_BLOB_HDR_HEADER_BYTES) != NNRT_BLOB_HEADER_BYTES ||
        total < NNRT_BLOB_HEADER_BYTES || total > bytes) {
        return NNRT_ERR_FORMAT; /* truncated, or a wrong size */
    }
    if (blob_crc(b, total) != RD32(b + NNRT_BLOB_HDR_CRC32)) {
        return NNRT_ERR_FORMAT;
    }
    if (RD32(b + NNRT_BLOB_HDR_FLAGS) != 0u) {
        return NNRT_ERR_UNSUPPORTED;
    }
    if (RD16(b + NNRT_BLOB_HDR_RESERVED) != 0u) {
        return NNRT_ERR_FORMAT;
    }
    ld->blob = b;
    ld->blob_bytes = total;
    ld->arena_need = RD32(b + NNRT_BLOB_HDR_ARENA_BYTES);
    ld->n_tensors = RD16(b + NNRT_BLOB_HDR_N_TENSORS);
    ld->n_handles = RD16(b + NNRT_BLOB_HDR_N_HANDLES);
    ld->n_steps = RD16(b + NNRT_BLOB_HDR_N_STEPS);
    ld->n_inputs = RD16(b + NNRT_BLOB_HDR_N_INPUTS);
    ld->n_outputs = RD16(b + NNRT_BLOB_HDR_N_OUTPUTS);
    ld->n_list = RD32(b + NNRT_BLOB_HDR_N_LIST);
    data_off = RD32(b + NNRT_BLOB_HDR_DATA_OFF);
    if (ld->n_tensors == NNRT_BLOB_NONE || ld->n_handles == NNRT_BLOB_NONE ||
        ld->arena_need > 0x7FFFFFF0u || (data_off % NNRT_BLOB_DATA_ALIGN) != 0u ||
        !in_blob(data_off, 0u, NNRT_BLOB_HEADER_BYTES, total)) {
        return NNRT_ERR_FORMAT;
    }
    off[0] = RD32(b + NNRT_BLOB_HDR_TENSORS_OFF);
    len[0] = (uint64_t)ld->n_tensors * NNRT_BLOB_TENSOR_BYTES;
    off[1] = RD32(b + NNRT_BLOB_HDR_HANDLES_OFF);
    len[1] = (uint64_t)ld->n_handles * 4u;
    off[2] = RD32(b + NNRT_BLOB_HDR_STEPS_OFF);
    len[2] = (uint64_t)ld->n_steps * NNRT_BLOB_STEP_BYTES;
    off[3] = RD32(b + NNRT_BLOB_HDR_IO_OFF);
    len[3] = ((uint64_t)ld->n_inputs + ld->n_outputs) * NNRT_BLOB_IO_BYTES;
    off[4] = RD32(b + NNRT_BLOB_HDR_LISTS_OFF);
    len[4] = (uint64_t)ld->n_list * 2u;
    for (i = 0; i < 5u; i++) {
        if ((off[i] & 3u) != 0u || !in_blob(off[i], len[i], NNRT_BLOB_HEADER_BYTES, data_off)) {
            return NNRT_ERR_FORMAT;
        }
    }
    ld->tensors = b + off[0];
    ld->handles = b + off[1];
    ld->steps = b + off[2];
    ld->io = b + off[3];
    ld->lists = b + off[4];
    ld->data = b + data_off;
    ld->data_bytes = total - data_off;

    for (i = 0; i < ld->n_handles; i++) {
        if (RD32(ld->handles + 4u * i) > ld->arena_need) {
            return NNRT_ERR_FORMAT;
        }
    }
    for (i = 0; i < ld->n_tensors; i++) {
        const uint8_t *r = TENSOR_REC(ld, i);
        uint32_t tbytes = RD32(r);
        uint32_t handle = RD16(r + 6);

        if (r[4] > (uint8_t)NNRT_BOOL || tbytes > 0x7FFFFFFFu || RD32(r + 12) != 0u) {
            return NNRT_ERR_FORMAT;
        }
        if (r[5] == NNRT_BLOB_KIND_ACTIVATION) {
            /* r + 8: byte offset within the block (a view of a split-like op) */
            if (handle >= ld->n_handles || tbytes > RD32(ld->handles + 4u * handle)
                || RD32(r + 8) > RD32(ld->handles + 4u * handle) - tbytes) {
                return NNRT_ERR_FORMAT;
            }
        } else if (r[5] == NNRT_BLOB_KIND_CONSTANT) {
            uint32_t doff = RD32(r + 8);

            if (handle != NNRT_BLOB_NONE || (doff % NNRT_BLOB_DATA_ALIGN) != 0u ||
                !in_blob(doff, tbytes, 0u, ld->data_bytes)) {
                return NNRT_ERR_FORMAT;
            }
        } else if (r[5] != NNRT_BLOB_KIND_UNUSED || handle != NNRT_BLOB_NONE) {
            return NNRT_ERR_FORMAT;
        }
    }
    for (i = 0; i < ld->n_inputs + ld->n_outputs; i++) {
        const uint8_t *r = io_rec(ld, 0, i);
        uint32_t t = RD16(r);
        const uint8_t *tr;

        if (t >= ld->n_tensors || r[3] > NNRT_MAX_DIMS) {
            return NNRT_ERR_FORMAT;
        }
        tr = TENSOR_REC(ld, t);
        if (tr[5] != NNRT_BLOB_KIND_ACTIVATION || tr[4] != r[2] || RD32(tr) != RD32(r + 36)) {
            return NNRT_ERR_FORMAT;
        }
    }
    return NNRT_OK;
}

/* The tensor arguments of step s, resolved (pointers only when the allocator runs). */
static nnrt_status_t step_args(const nnrt_loader_t *ld, const uint8_t *sr, nnrt_blob_args_t *a,
                               int with_ptrs)
{
    uint32_t first = RD32(sr + 12);
    uint32_t k;

    a->n = RD16(sr + 16);
    if (a->n > NNRT_BLOB_MAX_ARGS) {
        return NNRT_ERR_FORMAT;
    }
    for (k = 0; k < a->n; k++) {
        uint32_t t = list_at(ld, first + k);
        const uint8_t *r;

        a->ptr[k] = NULL;
        a->bytes[k] = 0u;
        a->dtype[k] = 0u;
        a->present[k] = 0u;
        if (t == NNRT_BLOB_NONE) {
            continue;
        }
        if (t >= ld->n_tensors) {
            return NNRT_ERR_FORMAT;
        }
        r = TENSOR_REC(ld, t);
        a->bytes[k] = RD32(r);
        a->dtype[k] = r[4];
        a->present[k] = 1u;
        if (r[5] == NNRT_BLOB_KIND_CONSTANT) {
            a->ptr[k] = (void *)(uintptr_t)(ld->data + RD32(r + 8));
        } else if (r[5] == NNRT_BLOB_KIND_ACTIVATION) {
            if (with_ptrs) {
                uint8_t *block =
                    (uint8_t *)nnrt_dyn_ptr(&ld->dyn, (nnrt_dyn_handle_t)RD16(r + 6));
                if (block == NULL) {
                    return NNRT_ERR_FORMAT; /* read before allocation or after free */
                }
                a->ptr[k] = block + RD32(r + 8); /* a view: its offset in the block */
            }
        } else {
            return NNRT_ERR_FORMAT;
        }
    }
    return NNRT_OK;
}

/* Every step: structure, list ranges, parameters against tensors (no execution). */
static nnrt_status_t check_steps(const nnrt_loader_t *ld)
{
    uint32_t s;

    for (s = 0; s < ld->n_steps; s++) {
        const uint8_t *sr = step_rec(ld, s);
        uint32_t kernel = RD16(sr);
        uint32_t poff = RD32(sr + 4);
        uint32_t pbytes = RD32(sr + 8);
        uint64_t n = (uint64_t)RD16(sr + 16) + RD16(sr + 18) + RD16(sr + 20) + RD16(sr + 22);
        uint32_t first = RD32(sr + 12);
        uint32_t k;
        nnrt_blob_args_t a;
        nnrt_status_t st;

        if (kernel >= NNRT_BLOB_K_COUNT || (kernel != NNRT_BLOB_K_NONE &&
                                            nnrt_blob_kernel_shape[kernel][1] == 0u)) {
            return NNRT_ERR_UNSUPPORTED;
        }
        if ((poff & 3u) != 0u || (pbytes & 3u) != 0u ||
            !in_blob(poff, pbytes, 0u, ld->data_bytes) || !in_blob(first, n, 0u, ld->n_list)) {
            return NNRT_ERR_FORMAT;
        }
        if (!nnrt_blob_args_fit(RD16(sr + 16), nnrt_blob_kernel_shape[kernel][0])) {
            return NNRT_ERR_FORMAT;
        }
        for (k = 0; k < (uint32_t)RD16(sr + 18) + RD16(sr + 20); k++) {
            if (list_at(ld, first + RD16(sr + 16) + k) >= ld->n_handles) {
                return NNRT_ERR_FORMAT;
            }
        }
        for (k = 0; k < RD16(sr + 22); k++) {
            uint32_t t = list_at(ld, first + RD16(sr + 16) + RD16(sr + 18) + RD16(sr + 20) + k);

            if (t >= ld->n_tensors || TENSOR_REC(ld, t)[5] != NNRT_BLOB_KIND_ACTIVATION) {
                return NNRT_ERR_FORMAT;
            }
        }
        st = step_args(ld, sr, &a, 0);
        if (st != NNRT_OK) {
            return st;
        }
        if (kernel == NNRT_BLOB_K_NONE) {
            if (pbytes != 0u) {
                return NNRT_ERR_FORMAT;
            }
            continue;
        }
        st = nnrt_blob_kernel(ld, kernel, ld->data + poff, pbytes, &a, 0);
        if (st != NNRT_OK) {
            return st;
        }
    }
    return NNRT_OK;
}

nnrt_status_t nnrt_loader_check(const void *blob, size_t bytes, nnrt_loader_needs_t *needs)
{
    nnrt_loader_t ld;
    nnrt_status_t s = parse(&ld, blob, bytes);

    if (s == NNRT_OK) {
        s = check_steps(&ld);
    }
    if (s == NNRT_OK && needs != NULL) {
        needs->arena_bytes = ld.arena_need;
        needs->work_bytes = (uint32_t)NNRT_DYN_TABLE_BYTES(ld.n_handles);
        needs->n_inputs = ld.n_inputs;
        needs->n_outputs = ld.n_outputs;
        needs->n_steps = ld.n_steps;
    }
    return s;
}

/* ---- execution ------------------------------------------------------------------- */
static nnrt_status_t prepare(nnrt_loader_t *ld)
{
    uint32_t i;

    if (ld->ready) {
        return NNRT_OK;
    }
    nnrt_dyn_reset(&ld->dyn);
    nnrt_dyn_reset_stats(&ld->dyn);
    ld->invoked = 0;
    for (i = 0; i < ld->n_inputs; i++) {
        nnrt_dyn_handle_t h = (nnrt_dyn_handle_t)RD16(TENSOR_REC(ld, RD16(io_rec(ld, 0, i))) + 6);

        if (nnrt_dyn_ptr(&ld->dyn, h) != NULL) {
            continue; /* the same tensor twice */
        }
        if (nnrt_dyn_alloc(&ld->dyn, h, RD32(ld->handles + 4u * h)) != NNRT_OK) {
            return NNRT_ERR_FORMAT;
        }
    }
    ld->ready = 1;
    return NNRT_OK;
}

/* One inference; run == 0 replays the allocation events only (checks liveness). */
static nnrt_status_t execute(nnrt_loader_t *ld, int run)
{
    uint32_t s;
    nnrt_status_t st = prepare(ld);

    if (st != NNRT_OK) {
        return st;
    }
    ld->ready = 0;
    for (s = 0; s < ld->n_steps; s++) {
        const uint8_t *sr = step_rec(ld, s);
        uint32_t first = RD32(sr + 12);
        uint32_t n_args = RD16(sr + 16);
        uint32_t n_alloc = RD16(sr + 18);
        uint32_t n_free = RD16(sr + 20);
        uint32_t n_trace = RD16(sr + 22);
        uint32_t kernel = RD16(sr);
        uint32_t k;
        nnrt_blob_args_t a;

        for (k = 0; k < n_alloc; k++) {
            nnrt_dyn_handle_t h = (nnrt_dyn_handle_t)list_at(ld, first + n_args + k);

            st = nnrt_dyn_alloc(&ld->dyn, h, RD32(ld->handles + 4u * h));
            if (st != NNRT_OK) {
                return st == NNRT_ERR_NOMEM ? NNRT_ERR_NOMEM : NNRT_ERR_FORMAT;
            }
        }
        st = step_args(ld, sr, &a, 1);
        if (st != NNRT_OK) {
            return st;
        }
        if (run && kernel != NNRT_BLOB_K_NONE) {
            st = nnrt_blob_kernel(ld, kernel, ld->data + RD32(sr + 4), RD32(sr + 8), &a, 1);
            if (st != NNRT_OK) {
                return st;
            }
        }
        for (k = 0; k < n_trace; k++) {
            uint32_t t = list_at(ld, first + n_args + n_alloc + n_free + k);
            const uint8_t *r = TENSOR_REC(ld, t);
            const void *p = nnrt_dyn_ptr(&ld->dyn, (nnrt_dyn_handle_t)RD16(r + 6));

            if (p == NULL) {
                return NNRT_ERR_FORMAT;
            }
            if (run && ld->trace != NULL) {
                ld->trace(ld->trace_user, t, p, RD32(r));
            }
        }
        for (k = 0; k < n_free; k++) {
            nnrt_dyn_handle_t h = (nnrt_dyn_handle_t)list_at(ld, first + n_args + n_alloc + k);

            if (nnrt_dyn_free(&ld->dyn, h) != NNRT_OK) {
                return NNRT_ERR_FORMAT;
            }
        }
        if (n_free > 0u) {
            (void)nnrt_dyn_compact(&ld->dyn);
        }
    }
    for (s = 0; s < ld->n_outputs; s++) {
        const uint8_t *r = TENSOR_REC(ld, RD16(io_rec(ld, 1, s)));

        if (nnrt_dyn_ptr(&ld->dyn, (nnrt_dyn_handle_t)RD16(r + 6)) == NULL) {
            return NNRT_ERR_FORMAT;
        }
    }
    ld->invoked = 1;
    return NNRT_OK;
}

nnrt_status_t nnrt_loader_open(nnrt_loader_t *ld, const void *blob, size_t bytes, void *arena,
                               size_t arena_bytes, void *work, size_t work_bytes)
{
    nnrt_status_t s;
    size_t table;

    if (ld == NULL || arena == NULL || work == NULL || ((uintptr_t)work & 3u) != 0u ||
        ((uintptr_t)arena & (NNRT_ARENA_ALIGN - 1u)) != 0u) {
        return NNRT_ERR_ARG;
    }
    s = parse(ld, blob, bytes);
    if (s == NNRT_OK) {
        s = check_steps(ld);
    }
    if (s != NNRT_OK) {
        memset(ld, 0, sizeof(*ld));
        return s;
    }
    table = NNRT_DYN_TABLE_BYTES(ld->n_handles);
    if (arena_bytes < ld->arena_need || work_bytes < table) {
        memset(ld, 0, sizeof(*ld));
        return NNRT_ERR_NOMEM;
    }
    s = nnrt_dyn_init(&ld->dyn, arena, ld->arena_need, (nnrt_dyn_block_t *)work,
                      (nnrt_dyn_handle_t *)(void *)((uint8_t *)work +
                                                    ld->n_handles * sizeof(nnrt_dyn_block_t)),
                      ld->n_handles);
    if (s == NNRT_OK) {
        s = execute(ld, 0); /* replay the allocation sequence: liveness and capacity */
    }
    if (s != NNRT_OK) {
        memset(ld, 0, sizeof(*ld));
        return s == NNRT_ERR_NOMEM ? NNRT_ERR_FORMAT : s; /* the header's arena lied */
    }
    ld->ready = 0;
    ld->invoked = 0;
    nnrt_dyn_reset(&ld->dyn);
    return NNRT_OK;
}

void nnrt_loader_set_trace(nnrt_loader_t *ld, nnrt_loader_trace_fn fn, void *user)
{
    if (ld != NULL) {
        ld->trace = fn;
        ld->trace_user = user;
    }
}

void *nnrt_loader_input(nnrt_loader_t *ld, uint32_t i, size_t *bytes)
{
    const uint8_t *r;

    if (ld == NULL || ld->blob == NULL || i >= ld->n_inputs || prepare(ld) != NNRT_OK) {
        return NULL;
    }
    r = TENSOR_REC(ld, RD16(io_rec(ld, 0, i)));
    if (bytes != NULL) {
        *bytes = RD32(r);
    }
    return nnrt_dyn_ptr(&ld->dyn, (nnrt_dyn_handle_t)RD16(r + 6));
}

nnrt_status_t nnrt_loader_invoke(nnrt_loader_t *ld)
{
    if (ld == NULL || ld->blob == NULL) {
        return NNRT_ERR_ARG;
    }
    return execute(ld, 1);
}

const void *nnrt_loader_output(const nnrt_loader_t *ld, uint32_t i, size_t *bytes)
{
    const uint8_t *r;

    if (ld == NULL || ld->blob == NULL || !ld->invoked || i >= ld->n_outputs) {
        return NULL;
    }
    r = TENSOR_REC(ld, RD16(io_rec(ld, 1, i)));
    if (bytes != NULL) {
        *bytes = RD32(r);
    }
    return nnrt_dyn_ptr(&ld->dyn, (nnrt_dyn_handle_t)RD16(r + 6));
}

nnrt_status_t nnrt_loader_io_desc(const nnrt_loader_t *ld, int output, uint32_t i,
                                  nnrt_tensor_desc_t *desc)
{
    const uint8_t *r;
    uint32_t d;
    uint32_t bits;

    if (ld == NULL || ld->blob == NULL || desc == NULL ||
        i >= (output ? ld->n_outputs : ld->n_inputs)) {
        return NNRT_ERR_ARG;
    }
    r = io_rec(ld, output, i);
    desc->name = "";
    desc->dtype = (nnrt_dtype_t)r[2];
    desc->rank = r[3];
    for (d = 0; d < NNRT_MAX_DIMS; d++) {
        desc->dims[d] = (int32_t)RD32(r + 4 + 4 * d);
    }
    bits = RD32(r + 28);
    memcpy(&desc->scale, &bits, sizeof(desc->scale));
    desc->zero_point = (int32_t)RD32(r + 32);
    desc->bytes = RD32(r + 36);
    return NNRT_OK;
}
