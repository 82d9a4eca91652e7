"""The model blob's binary layout, defined once: Python writes it, and it generates
the C side of the loader. The kernels the blob can call, with their ids, are the
operator definitions' (``OpDef.kernels``, :class:`~nnopt.ops.base.Kernel`; :data:`KERNELS`
collects them); this module holds the records' layout and the C it generates:
:func:`c_header` (``modules/nnrt/src/loader/blob_schema.h``: constants, header field
offsets, kernel ids and the per-struct field tables the loader's decoder uses),
:func:`c_checks` (``blob_checks.h``: the prototypes of the family checkers --
:data:`C_CHECKS` -- that both their definitions in ``loader_<family>.c`` and the kernel
table include, so the compiler holds the two to one signature) and :func:`c_dispatch`
(``blob_dispatch.c``: per kernel id, the glue that decodes its record, runs its family's
checker and calls it). ``python -m nnopt.blob.schema [header|checks|dispatch]`` prints
them; a test checks the checked-in copies.

All integers little endian. Layout (format version 1)::

    header (64 bytes)
    0   4  magic "NNMB"
    4   2  format version (1)
    6   2  header size (64)
    8   4  total size of the blob in bytes
    12  4  CRC-32 (IEEE, zlib's) of the whole blob with these 4 bytes taken as zero
    16  4  flags (0; any other value is refused)
    20  4  arena bytes the dynamic allocator needs (aligned live-sum peak)
    24  2  tensor count T          26  2  handle count H
    28  2  step count S            30  2  input count
    32  2  output count            34  2  reserved (0)
    36  4  tensor table offset (T x 16 bytes)
    40  4  handle table offset (H x 4 bytes: block size)
    44  4  step table offset (S x 24 bytes)
    48  4  io table offset ((inputs + outputs) x 40 bytes)
    52  4  list offset (uint16 entries)   56  4  list entry count
    60  4  data offset (16-aligned; data runs to the end of the blob)

    tensor (16 bytes): u32 bytes, u8 dtype, u8 kind (0 activation, 1 constant,
        2 unused), u16 handle (activations; 0xFFFF otherwise), u32 data offset
        (constants: from the data offset, 16-aligned; activations: the byte offset
        within the handle's block, 0 but for a view of a split-like op), u32 reserved (0)
    step (24 bytes): u16 kernel (0: no code, an aliased op), u16 op index (.tflite),
        u32 params offset (from the data offset, 4-aligned), u32 params bytes,
        u32 first list entry, then u16 counts: args, allocs, frees, traced
        -- its list entries: args (tensor index, 0xFFFF = NULL), handles allocated
        before the op, handles freed after it (then a compaction), tensors it produced
    io (40 bytes): u16 tensor, u8 dtype, u8 rank, i32 dims[6], f32 scale,
        i32 zero point, u32 bytes

Parameter records: the kernel's parameter structs flattened field by field, 4 bytes
each (int32, float32 bits, or ``ref``: the index of a constant int32 tensor whose
data the field points to; ``opt``: 0/1, whether the optional struct follows), then
the kernel's scalar arguments, then the optional struct's fields when present.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from ..ops import DEFINITIONS
from ..ops.base import VARIABLE_ARGS, Kernel, OpDef

MAGIC = b"NNMB"
FORMAT_VERSION = 1
HEADER_BYTES = 64
TENSOR_BYTES = 16
STEP_BYTES = 24
IO_BYTES = 40
DATA_ALIGN = 16
NONE16 = 0xFFFF

# (name, struct format, offset): the header fields, in order
HEADER_FIELDS: tuple[tuple[str, str, int], ...] = (
    ("magic", "I", 0), ("version", "H", 4), ("header_bytes", "H", 6),
    ("total_bytes", "I", 8), ("crc32", "I", 12), ("flags", "I", 16),
    ("arena_bytes", "I", 20), ("n_tensors", "H", 24), ("n_handles", "H", 26),
    ("n_steps", "H", 28), ("n_inputs", "H", 30), ("n_outputs", "H", 32),
    ("reserved", "H", 34), ("tensors_off", "I", 36), ("handles_off", "I", 40),
    ("steps_off", "I", 44), ("io_off", "I", 48), ("lists_off", "I", 52),
    ("n_list", "I", 56), ("data_off", "I", 60),
)
HEADER_STRUCT = "<" + "".join(f for _, f, _ in HEADER_FIELDS)

KIND_ACTIVATION, KIND_CONSTANT, KIND_UNUSED = 0, 1, 2

I32, F32, REF, OPT = "i32", "f32", "ref", "opt"
DIMS = "i32[6]"  # an int32 array of NNRT_MAX_DIMS entries

_CONV_GEOM = ("batches", "input_h", "input_w", "input_c", "output_h", "output_w", "output_c",
              "filter_h", "filter_w", "filter_c", "stride_h", "stride_w", "dilation_h",
              "dilation_w", "pad_top", "pad_left")
_POOL_GEOM = ("batches", "input_h", "input_w", "channels", "output_h", "output_w",
              "filter_h", "filter_w", "stride_h", "stride_w", "pad_top", "pad_left")

_BINARY_S8 = ("input1_offset", "input2_offset", "left_shift", "input1_multiplier",
              "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
              "output_shift", "output_offset", "act_min", "act_max")
_MUL_S8 = ("input1_offset", "input2_offset", "output_multiplier", "output_shift",
           "output_offset", "act_min", "act_max")

#: C parameter structs: field name -> kind (i32, f32, ref, opt, i32[n]) or a nested
#: struct type.
STRUCTS: dict[str, tuple[tuple[str, str], ...]] = {
    "nnrt_conv_geom_t": tuple((f, I32) for f in _CONV_GEOM),
    "nnrt_conv_pool_t": (*((f, I32) for f in ("output_h", "output_w", "filter_h", "filter_w",
                                              "stride_h", "stride_w", "pad_top", "pad_left",
                                              "act_min", "act_max")),
                         ("act_min_f", F32), ("act_max_f", F32)),
    "nnrt_conv_s8_params_t": (("geom", "nnrt_conv_geom_t"), ("input_offset", I32),
                              ("output_offset", I32), ("act_min", I32), ("act_max", I32),
                              ("per_channel", I32), ("multiplier", REF), ("shift", REF),
                              ("pool", OPT)),
    "nnrt_conv_f32_params_t": (("geom", "nnrt_conv_geom_t"), ("act_min", F32),
                               ("act_max", F32), ("pool", OPT)),
    "nnrt_fc_s8_params_t": (*((f, I32) for f in ("batches", "accum_depth", "output_depth",
                                                 "input_offset", "weights_offset",
                                                 "output_offset", "act_min", "act_max",
                                                 "per_channel")),
                            ("multiplier", REF), ("shift", REF)),
    "nnrt_fc_f32_params_t": (("batches", I32), ("accum_depth", I32), ("output_depth", I32),
                             ("act_min", F32), ("act_max", F32)),
    "nnrt_pool_geom_t": tuple((f, I32) for f in _POOL_GEOM),
    "nnrt_pool_s8_params_t": (("geom", "nnrt_pool_geom_t"), ("act_min", I32),
                              ("act_max", I32)),
    "nnrt_pool_f32_params_t": (("geom", "nnrt_pool_geom_t"), ("act_min", F32),
                               ("act_max", F32)),
    "nnrt_softmax_s8_params_t": (("input_multiplier", I32), ("input_left_shift", I32),
                                 ("diff_min", I32)),
    "nnrt_softmax_s16_params_t": (("input_multiplier", I32), ("input_left_shift", I32)),
    "nnrt_broadcast_t": (("rank", I32), ("dims", DIMS), ("stride1", DIMS),
                         ("stride2", DIMS)),
    "nnrt_add_s8_params_t": (("bcast", "nnrt_broadcast_t"), *((f, I32) for f in _BINARY_S8)),
    "nnrt_mul_s8_params_t": (("bcast", "nnrt_broadcast_t"), *((f, I32) for f in _MUL_S8)),
    "nnrt_binary_s32_params_t": (("bcast", "nnrt_broadcast_t"), ("act_min", I32),
                                 ("act_max", I32)),
    "nnrt_binary_f32_params_t": (("bcast", "nnrt_broadcast_t"), ("act_min", F32),
                                 ("act_max", F32)),
    "nnrt_mean_geom_t": (("outer_rank", I32), ("outer_dims", DIMS), ("outer_strides", DIMS),
                         ("reduce_rank", I32), ("reduce_dims", DIMS),
                         ("reduce_strides", DIMS)),
    "nnrt_concat_params_t": (("outer", I32), ("num_inputs", I32), ("block_bytes", REF)),
    "nnrt_pad_params_t": (("rank", I32), ("elem_size", I32), ("input_dims", DIMS),
                          ("before", DIMS), ("after", DIMS)),
    "nnrt_strided_copy_params_t": (("rank", I32), ("elem_size", I32), ("offset", I32),
                                   ("dims", DIMS), ("strides", DIMS)),
    "nnrt_mean_s8_params_t": (("geom", "nnrt_mean_geom_t"), ("input_zero_point", I32),
                              ("output_zero_point", I32), ("multiplier", I32),
                              ("shift", I32), ("count", I32)),
}
#: The struct an ``opt`` field points to.
OPTIONAL_STRUCT = {"nnrt_conv_s8_params_t": "nnrt_conv_pool_t",
                   "nnrt_conv_f32_params_t": "nnrt_conv_pool_t"}


#: Most inputs of a variable-arity argument ("tensors").
MAX_LIST_ARGS = 15
KERNEL_NONE = 0


def registry_kernels(definitions: Iterable[OpDef]) -> tuple[Kernel, ...]:
    """The kernels the model blob can call: every definition's (``OpDef.kernels``), by
    id. A kernel shared by several definitions is one :class:`Kernel`; two kernels with
    one id or one function, or a kernel of a definition the blob does not carry, are a
    ValueError."""
    by_id: dict[int, Kernel] = {}
    by_function: dict[str, Kernel] = {}
    for d in definitions:
        if d.kernels and not d.blob:
            raise ValueError(f"{d.opcode} has blob kernels but blob=False")
        for k in d.kernels:
            other = by_id.get(k.id, by_function.get(k.function, k))
            if other != k or k.id == KERNEL_NONE:
                raise ValueError(f"blob kernel {k.id} {k.function} of {d.opcode} clashes "
                                 f"with {other.id} {other.function}")
            by_id[k.id] = by_function[k.function] = k
    return tuple(by_id[i] for i in sorted(by_id))


KERNELS: tuple[Kernel, ...] = registry_kernels(DEFINITIONS.values())
KERNEL_BY_FUNCTION = {k.function: k for k in KERNELS}
#: Variants the lowerings may pick whose results and arguments equal another kernel's
#: (``Kernel.same``): variant -> the kernel the blob runs.
EQUIVALENT = {v: k.function for k in KERNELS for v in k.same}
#: The loader's check of each kernel's decoded record against its tensors (one per
#: family, in modules/nnrt/src/loader/loader_<family>.c; they call the kernels' own
#: nnrt_*_check()): kernel function -> checker (``nnrt_blob_check_<name>``).
C_CHECKS: dict[str, str] = {k.function: k.check for k in KERNELS}


def record_words(k: Kernel) -> int:
    """4-byte words of the kernel's record without the optional struct."""
    return (len(flat_fields(k.struct)) if k.struct else 0) + len(k.scalars)


def optional_words(k: Kernel) -> int:
    """4-byte words of the kernel's optional struct (0: none)."""
    opt = OPTIONAL_STRUCT.get(k.struct or "")
    return len(flat_fields(opt)) if opt else 0


def flat_fields(ctype: str, prefix: str = "") -> list[tuple[str, str]]:
    """(path, kind) of every 4-byte field of a struct, nested structs expanded."""
    out: list[tuple[str, str]] = []
    for name, kind in STRUCTS[ctype]:
        if kind in STRUCTS:
            out += flat_fields(kind, f"{prefix}{name}.")
        elif kind.endswith("]"):
            base, n = kind[:-1].split("[")
            out += [(f"{prefix}{name}[{i}]", base) for i in range(int(n))]
        else:
            out.append((f"{prefix}{name}", kind))
    return out


# ----- the C side -----

def _ident(s: str) -> str:
    return s.upper().replace(".", "_")


def c_header() -> str:
    """``modules/nnrt/src/loader/blob_schema.h``."""
    lines = [
        "/* Generated by `python -m nnopt.blob.schema` from scripts/nnopt/blob/schema.py.",
        " * Do not edit; tests/test_blob_loader.py checks it. */",
        "#ifndef NNRT_LOADER_BLOB_SCHEMA_H_",
        "#define NNRT_LOADER_BLOB_SCHEMA_H_",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        '#include "nnrt/kernels/conv.h"',
        '#include "nnrt/kernels/elementwise.h"',
        '#include "nnrt/kernels/fc.h"',
        '#include "nnrt/kernels/pool.h"',
        '#include "nnrt/kernels/shape.h"',
        '#include "nnrt/kernels/softmax.h"',
        "",
        f"#define NNRT_BLOB_TENSOR_BYTES {TENSOR_BYTES}u",
        f"#define NNRT_BLOB_STEP_BYTES {STEP_BYTES}u",
        f"#define NNRT_BLOB_IO_BYTES {IO_BYTES}u",
        f"#define NNRT_BLOB_DATA_ALIGN {DATA_ALIGN}u",
        f"#define NNRT_BLOB_NONE 0x{NONE16:X}u",
        f"#define NNRT_BLOB_VARIABLE_ARGS {VARIABLE_ARGS}u",
        f"#define NNRT_BLOB_MAX_LIST_ARGS {MAX_LIST_ARGS}u",
        f"#define NNRT_BLOB_KIND_ACTIVATION {KIND_ACTIVATION}u",
        f"#define NNRT_BLOB_KIND_CONSTANT {KIND_CONSTANT}u",
        f"#define NNRT_BLOB_KIND_UNUSED {KIND_UNUSED}u",
        "",
        "/* Header field offsets. */",
    ]
    for name, _, off in HEADER_FIELDS:
        lines.append(f"#define NNRT_BLOB_HDR_{name.upper()} {off}u")
    lines += ["", "/* Field kinds of a parameter record. */",
              "#define NNRT_BLOB_F_I32 0u", "#define NNRT_BLOB_F_F32 1u",
              "#define NNRT_BLOB_F_REF 2u", "#define NNRT_BLOB_F_OPT 3u", "",
              "/** One 4-byte field of a record: where it goes in the C struct. */",
              "typedef struct {", "    uint16_t offset;", "    uint8_t kind;",
              "} nnrt_blob_field_t;",
              "", "/* Kernel ids. */"]
    lines.append(f"#define NNRT_BLOB_K_NONE {KERNEL_NONE}u")
    for k in KERNELS:
        lines.append(f"#define NNRT_BLOB_K_{_ident(k.function.removeprefix('nnrt_'))} {k.id}u")
    lines.append(f"#define NNRT_BLOB_K_COUNT {max(k.id for k in KERNELS) + 1}u")
    kinds = {I32: "NNRT_BLOB_F_I32", F32: "NNRT_BLOB_F_F32", REF: "NNRT_BLOB_F_REF",
             OPT: "NNRT_BLOB_F_OPT"}
    used = {k.struct for k in KERNELS if k.struct} | set(OPTIONAL_STRUCT.values())
    for ctype in (c for c in STRUCTS if c in used):
        fields = flat_fields(ctype)
        base = ctype.removesuffix("_t").upper()
        lines += ["", f"/* {ctype}: {len(fields)} fields */",
                  f"#define {base}_FIELDS {len(fields)}u",
                  f"static const nnrt_blob_field_t {ctype.removesuffix('_t')}_fields[] = {{"]
        lines += [f"    {{(uint16_t)offsetof({ctype}, {path}), {kinds[kind]}}},"
                  for path, kind in fields]
        lines.append("};")
    lines += ["", "/** Per kernel: tensor arguments, record words (without the optional",
              " * struct), words of the optional struct. Index: kernel id. */",
              "static const uint8_t nnrt_blob_kernel_shape[NNRT_BLOB_K_COUNT][3] = {"]
    by_id = {k.id: k for k in KERNELS}
    for i in range(max(by_id) + 1):
        kern = by_id.get(i)
        if kern is None:
            lines.append("    {0u, 0u, 0u}, /* none */")
        else:
            lines.append(f"    {{{kern.tensor_args}u, {record_words(kern)}u, "
                         f"{optional_words(kern)}u}}, /* {kern.function} */")
    lines += ["};", "", "#endif /* NNRT_LOADER_BLOB_SCHEMA_H_ */", ""]
    return "\n".join(lines)


def c_constants() -> str:
    """The ``#define`` block of ``nnrt/loader.h`` that mirrors this module."""
    rows: Sequence[tuple[str, str, str]] = [
        ("NNRT_BLOB_MAGIC", "0x" + MAGIC[::-1].hex().upper() + "u",
         '"NNMB" read as a little-endian uint32'),
        ("NNRT_BLOB_FORMAT_VERSION", f"{FORMAT_VERSION}u", "blob format version"),
        ("NNRT_BLOB_HEADER_BYTES", f"{HEADER_BYTES}u", "header size"),
    ]
    width = max(len(r[0]) for r in rows) + 1
    return "\n".join(f"#define {name:<{width}}{value} /* {doc} */" for name, value, doc in rows)


_SCALAR_MEMBER = {I32: "i", F32: "f", "u32": "u"}


def _optional_field(ctype: str) -> str | None:
    return next((name for name, kind in STRUCTS[ctype] if kind == OPT), None)


def _c_glue(k: Kernel) -> list[str]:
    """The generated glue of one kernel: decode its record, run its checker, call it."""
    name = k.function.removeprefix("nnrt_")
    check = f"nnrt_blob_check_{C_CHECKS[k.function]}"
    out = [f"/* {k.id}: {k.function}({', '.join(k.args)}) */",
           f"static nnrt_status_t k_{name}(nnrt_blob_call_t *c)", "{"]
    body: list[str] = []
    if k.struct:
        body.append(f"    {k.struct} p;")
        opt = OPTIONAL_STRUCT.get(k.struct)
        if opt:
            body.append(f"    {opt} opt;")
    if "tensors" in k.args:
        body.append("    const void *list[NNRT_BLOB_MAX_ARGS];")
    body += ["    nnrt_status_t s;", ""]
    if k.struct:
        base = k.struct.removesuffix("_t")
        body.append(f"    s = nnrt_blob_decode(c, {base}_fields, {base.upper()}_FIELDS, &p);")
    if k.scalars and k.struct:
        body += ["    if (s == NNRT_OK) {",
                 f"        s = nnrt_blob_scalars(c, {len(k.scalars)}u);", "    }"]
    elif k.scalars:
        body.append(f"    s = nnrt_blob_scalars(c, {len(k.scalars)}u);")
    if k.struct and OPTIONAL_STRUCT.get(k.struct):
        opt = OPTIONAL_STRUCT[k.struct]
        obase = opt.removesuffix("_t")
        body += ["    if (s == NNRT_OK && c->opt) {",
                 f"        s = nnrt_blob_decode(c, {obase}_fields, {obase.upper()}_FIELDS, "
                 "&opt);",
                 f"        p.{_optional_field(k.struct)} = &opt;", "    }"]
    body += ["    if (s != NNRT_OK || c->pos != c->words) {", "        return NNRT_ERR_FORMAT;",
             "    }",
             f"    s = {check}(c{', &p' if k.struct else ''});",
             "    if (s != NNRT_OK || !c->run) {", "        return s;", "    }"]
    call: list[str] = []
    t = 0
    sc = 0
    after_list = sum(a.startswith("tensor") and a != "tensors"
                     for a in k.args[k.args.index("tensors") + 1:]) if "tensors" in k.args else 0
    for a in k.args:
        if a.startswith("struct:"):
            call.append("&p")
        elif a == "tensors":
            body += [f"    for (uint32_t i = 0u; i + {after_list}u < c->args->n; i++) {{",
                     "        list[i] = c->args->ptr[i];", "    }"]
            call.append("list")
            t = -after_list  # the following tensors count from the end
        elif a.startswith("tensor"):
            call.append(f"c->args->ptr[{t}]" if t >= 0 else f"c->args->ptr[c->args->n - {-t}u]")
            t += 1
        else:
            call.append(f"c->sc[{sc}].{_SCALAR_MEMBER[a]}")
            sc += 1
    body.append(f"    return {k.function}({', '.join(call)});")
    out += body
    out.append("}")
    return out


def c_dispatch() -> str:
    """``modules/nnrt/src/loader/blob_dispatch.c``: per kernel id, the glue that decodes
    the parameter record (field tables of blob_schema.h), runs the family's checker
    (loader_<family>.c) and calls the kernel with its arguments in declaration order;
    the table indexed by kernel id; and ``nnrt_blob_kernel()``."""
    missing = [k.function for k in KERNELS if k.function not in C_CHECKS]
    if missing:
        raise ValueError(f"no loader check for {', '.join(missing)}: add it to C_CHECKS")
    lines = [
        "/* Generated by `python -m nnopt.blob.schema dispatch` from",
        " * scripts/nnopt/blob/schema.py. Do not edit; tests/test_blob_loader.py checks it.",
        " *",
        " * The model loader's kernel table: for each kernel id, decode the step's parameter",
        " * record into the kernel's own structs, check it against the kernel and its",
        " * tensors (nnrt_blob_check_*(), one per family in loader_<family>.c) and, when",
        " * running, call the kernel. */",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        '#include "blob_checks.h"',
        '#include "blob_schema.h"',
        '#include "loader_check.h"',
        "",
    ]
    for k in KERNELS:
        lines += [*_c_glue(k), ""]
    by_id = {k.id: k for k in KERNELS}
    lines += ["typedef nnrt_status_t (*nnrt_blob_glue_t)(nnrt_blob_call_t *c);", "",
              "/* Index: kernel id (NULL: none). */",
              "static const nnrt_blob_glue_t glue[NNRT_BLOB_K_COUNT] = {"]
    for i in range(max(by_id) + 1):
        kern = by_id.get(i)
        lines.append(f"    k_{kern.function.removeprefix('nnrt_')}," if kern else "    NULL,")
    lines += [
        "};",
        "",
        "nnrt_status_t nnrt_blob_kernel(const nnrt_loader_t *ld, uint32_t kernel, "
        "const uint8_t *rec,",
        "                               uint32_t rec_bytes, const nnrt_blob_args_t *args, "
        "int run)",
        "{",
        "    nnrt_blob_call_t c;",
        "",
        "    if (kernel >= NNRT_BLOB_K_COUNT ||",
        "        !nnrt_blob_args_fit(args->n, nnrt_blob_kernel_shape[kernel][0])) {",
        "        return NNRT_ERR_FORMAT;",
        "    }",
        "    if (glue[kernel] == NULL) {",
        "        return NNRT_ERR_UNSUPPORTED;",
        "    }",
        "    nnrt_blob_call_init(&c, ld, kernel, rec, rec_bytes, args, run);",
        "    return glue[kernel](&c);",
        "}",
        "",
    ]
    return "\n".join(lines)


#: The kernel headers declaring the parameter structs of the checkers' prototypes.
_KERNEL_HEADERS = ("activation", "conv", "elementwise", "fc", "pool", "shape", "softmax")


def c_checks() -> str:
    """``modules/nnrt/src/loader/blob_checks.h``: the prototypes of the family checkers
    (``nnrt_blob_check_<name>()``, :data:`C_CHECKS`), included by the generated kernel
    table that calls them and by each ``loader_<family>.c`` that defines them."""
    return "\n".join([
        "/* Generated by `python -m nnopt.blob.schema checks` from",
        " * scripts/nnopt/blob/schema.py. Do not edit; tests/test_blob_loader.py checks it.",
        " *",
        " * The model loader's family checkers: defined in loader_<family>.c, called by the",
        " * generated kernel table (blob_dispatch.c); both include this header, so the",
        " * compiler checks every definition against the call's prototype. */",
        "#ifndef NNRT_LOADER_BLOB_CHECKS_H_",
        "#define NNRT_LOADER_BLOB_CHECKS_H_",
        "",
        '#include "loader_check.h"',
        *(f'#include "nnrt/kernels/{h}.h"' for h in _KERNEL_HEADERS),
        "",
        *_c_check_prototypes(),
        "",
        "#endif /* NNRT_LOADER_BLOB_CHECKS_H_ */",
        "",
    ])


def _c_check_prototypes() -> list[str]:
    seen: dict[str, str | None] = {}
    for k in KERNELS:
        seen.setdefault(C_CHECKS[k.function], k.struct)
    out = []
    for name, struct in sorted(seen.items()):
        arg = f", const {struct} *p" if struct else ""
        out.append(f"nnrt_status_t nnrt_blob_check_{name}(nnrt_blob_call_t *c{arg});")
    return out


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "header"
    writers = {"header": c_header, "checks": c_checks, "dispatch": c_dispatch}
    if what not in writers:
        sys.exit("usage: python -m nnopt.blob.schema [header|checks|dispatch]")
    sys.stdout.write(writers[what]())
