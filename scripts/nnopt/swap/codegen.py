"""C for streamed operators: the swap context, the staging buffers and op bodies that
wait for each weight chunk, prefetch the next one and run the kernel on it.

What the generated model gains (``<name>_model.c/.h``, besides the usual content):

- ``#include "nnrt/swap.h"``; two staging buffers and the chunk table in
  ``NNRT_DTCM`` (the DTCM on boards that have one: DMA-reachable, uncached), the
  driver context, the AEAD key (from the build configuration) and the layout id as
  const data; with a key id (``--swap-key-id``) no key byte at all, the attach opens
  the blob with ``.key_id`` (a PSA key the device holds, see :mod:`.provision`) and the
  header defines ``<NAME>_SWAP_KEY_ID``;
- ``nnrt_status_t <name>_swap_attach(nnrt_extflash_t *dev)``: opens the blob on a
  device (header, table, layout id, algorithm and chunk count checked; key imported);
  ``void <name>_swap_detach(void)``; ``nnrt_swap_stats_t <name>_swap_stats(void)``;
- ``invoke()`` first refuses to run without a blob (``NNRT_ERR_IO``) and issues the
  read of chunk 0, then runs the operators (the code generator's invoke, renamed
  ``<name>_invoke_ops``);
- each streamed op, for each of its chunks k (in order)::

      s = nnrt_swap_wait(&<name>_swap, k, &w_chunk, &w_len);  // read k done, read k+1
      if (s != NNRT_OK) return s;                             // issued, k decrypted
      if (w_len != <bytes>) return NNRT_ERR_FORMAT;
      { <the op's lowering for this chunk, weights at w_chunk>; s = kernel(...); }
      if (s != NNRT_OK) return s;

The body of each chunk comes from the op's own lowering (:mod:`nnopt.lowering`), so
the arithmetic is exactly the non-streamed op's. A chunk covering the whole tensor runs
the unchanged lowering with the weight pointer replaced. A chunk covering output
channels [c0, c1) of a layer whose output slice is contiguous (one output row: FC with
batch 1, a conv with a 1x1 output) runs the lowering on a *sliced* op (filter, bias,
per-channel scales and output restricted to [c0, c1), output pointer advanced by c0):
today's kernels need no change for either. Other multi-chunk layers (a conv with
several output pixels: its channel slice is strided) run the sliced op into a dense
**slice buffer** (``<name>_slice``, the largest slice's output) and copy it into its
channels of the output (``nnrt_copy_2d_x8``): layers too large for the staging buffers
stream in output-channel slices instead of being refused, at the cost of that buffer
and one strided copy of the output per layer.

:func:`generate_swapped` writes a complete model with the model emitter
(:class:`nnopt.codegen.c_model.ModelEmitter`) and :func:`swap_extension`: the streamed
ops' functions, the swap declarations, the attach hook and the ``invoke()`` wrapper.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..cdefs import DType
from ..codegen.c_model import Extension, GeneratedSources, ModelEmitter
from ..errors import PlanError, UnsupportedError
from ..ir import Graph, Op, Quant, Tensor
from ..lowering import EmitContext
from ..lowering.call import Body, Call, Expr, Literal, lit, render
from ..ops import known, lowering_for
from ..planner import PlannedModel
from . import swap_layout_id, write_model_blob
from .placement import ChunkEntry, SwapPlan
from .provision import parse_key_id
from .sealed_blob import ALGORITHMS, LAYOUT_ID_BYTES, TAG_BYTES

ConstArray = Callable[[str, np.ndarray], str]
Emit = Callable[[EmitContext], Body]


@dataclass(frozen=True)
class SwapEmit:
    """Everything the generated swap code needs."""

    name: str  # model identifier (the ``<name>`` of ``<name>_model``)
    swap: SwapPlan
    key: bytes | None  # compiled in (development), or None with key_id
    layout_id: bytes
    key_id: int | None = None  # PSA key id in the device's key store: no key bytes
    slice_bytes: int = 0  # the slice buffer (strided channel slices), 0: none
    # accumulator units of the depth-sliced layers (float32 and int32 partial sums)
    acc_f32: int = 0
    acc_s32: int = 0
    # ops in row bands whose weights stream: the band code runs their chunks
    # (nnopt.codegen.bands), not an op function of this extension
    banded: frozenset[int] = frozenset()

    @property
    def ctx(self) -> str:
        return f"{self.name}_swap"

    @property
    def buffer_bytes(self) -> int:
        return max(16, (self.swap.staging_bytes + TAG_BYTES + 15) // 16 * 16)


def slice_buffer_bytes(graph: Graph, swap: SwapPlan,
                       band_pixels: Mapping[int, int] | None = None) -> int:
    """Bytes of the slice buffer: the largest dense output of a chunk of a layer whose
    channel slices are strided (0: no such layer streams in slices); ``band_pixels``:
    per op in row bands, the output pixels of its tallest band."""
    out = 0
    for c in swap.chunks:
        op = graph.op_by_index[c.op]
        w = graph.tensors[c.tensor]
        if band_pixels and c.op in band_pixels:
            y = graph.tensors[op.outputs[0]]
            out = max(out, band_pixels[c.op] * (c.c1 - c.c0) * (y.nbytes // y.num_elements))
            continue
        if c.c0 == 0 and c.c1 == w.shape[c.axis]:
            continue
        if not _contiguous_slice(graph, op, c):
            y = graph.tensors[op.outputs[0]]
            out = max(out, y.nbytes // y.shape[-1] * (c.c1 - c.c0))
    return out


def accumulator_units(graph: Graph, swap: SwapPlan) -> tuple[int, int]:
    """Units of the float32 and of the int32 accumulator: the largest block of output
    channels that streams in depth slices (0: none)."""
    f32 = s32 = 0
    for c in swap.chunks:
        if c.k1:
            if graph.tensors[c.tensor].dtype == DType.FLOAT32:
                f32 = max(f32, c.c1 - c.c0)
            else:
                s32 = max(s32, c.c1 - c.c0)
    return f32, s32


def _hex_list(data: bytes) -> str:
    return ", ".join(f"0x{b:02x}" for b in data)


def declarations(se: SwapEmit) -> list[str]:
    """File-scope C: buffers, context, key, attach/detach/stats (after the weights)."""
    n = se.swap.chunk_count
    alg = ALGORITHMS[se.swap.algorithm]
    name, ctx = se.name, se.ctx
    if len(se.layout_id) != LAYOUT_ID_BYTES:
        raise PlanError("layout id must be 16 bytes")
    if (se.key is None) == (se.key_id is None):
        raise PlanError("swap codegen needs either key bytes or a key id")
    if se.key_id is not None:
        key_decl = [
            f"/* AEAD key: PSA key id 0x{se.key_id:08x} in the device's key store (provisioned,",
            " * e.g. persistent in PSA ITS); no key byte is in this image. nnrt_swap_open()",
            " * checks its type, algorithm and usage DECRYPT (nnrt/swap.h, \"Keys\"). */",
        ]
        key_cfg = ["        .key = NULL,", f"        .key_id = 0x{se.key_id:08x}u,"]
    else:
        assert se.key is not None
        key_decl = [
            "/* AEAD key from the build configuration, compiled in: anyone who can read this",
            " * flash can decrypt the blob (see scripts/nnopt/swap/README.md, --swap-key-id). */",
            f"static const uint8_t {ctx}_key[{len(se.key)}] = {{{_hex_list(se.key)}}};",
        ]
        key_cfg = [f"        .key = {ctx}_key,", f"        .key_len = sizeof({ctx}_key),"]
    slice_decl = [
        "/* Slice buffer: one channel slice's output of a layer whose slices are strided. */",
        f"NNRT_ARENA static uint8_t {name}_slice[{(se.slice_bytes + 15) // 16 * 16}];",
    ] if se.slice_bytes else []
    acc_decl = [
        "/* Partial sums of the layers whose weight rows stream in depth slices. */",
        *([f"NNRT_ARENA static float {name}_acc_f32[{se.acc_f32}];"] if se.acc_f32 else []),
        *([f"NNRT_ARENA static int32_t {name}_acc_s32[{se.acc_s32}];"] if se.acc_s32 else []),
    ] if se.acc_f32 or se.acc_s32 else []
    return [
        *slice_decl,
        *acc_decl,
        f"/* Swap: {n} weight chunks stream from external flash ({se.swap.algorithm}), "
        f"staging 2 x {se.buffer_bytes} B. */",
        f"NNRT_DTCM static uint8_t {name}_stage0[{se.buffer_bytes}];",
        f"NNRT_DTCM static uint8_t {name}_stage1[{se.buffer_bytes}];",
        *(["/* The chunk table on demand: two entries, each read when its chunk is. */",
           f"NNRT_DTCM static uint8_t {name}_swap_table[2u * NNRT_SWAP_ENTRY_BYTES];"]
          if se.swap.table_on_demand else
          [f"NNRT_DTCM static uint8_t {name}_swap_table[{n}u * NNRT_SWAP_ENTRY_BYTES];"]),
        f"static nnrt_swap_t {ctx};",
        f"static int {ctx}_attached;",
        *key_decl,
        f"static const uint8_t {ctx}_layout[{LAYOUT_ID_BYTES}] = {{{_hex_list(se.layout_id)}}};",
        "",
        f"nnrt_status_t {name}_swap_attach(nnrt_extflash_t *dev)",
        "{",
        "    const nnrt_swap_config_t cfg = {",
        "        .dev = dev,",
        *key_cfg,
        f"        .algorithm = {alg}u,",
        f"        .layout_id = {ctx}_layout,",
        f"        .expect_chunks = {n}u,",
        f"        .staging = {{{name}_stage0, {name}_stage1}},",
        f"        .staging_bytes = sizeof({name}_stage0),",
        f"        .table = {name}_swap_table,",
        f"        .table_capacity = {2 if se.swap.table_on_demand else n}u,",
        "        .prefetch_next = 1,",
        *(["        .table_on_demand = 1,"] if se.swap.table_on_demand else []),
        "    };",
        "    nnrt_status_t s;",
        "",
        f"    {name}_swap_detach();",
        f"    s = nnrt_swap_open(&{ctx}, &cfg);",
        f"    {ctx}_attached = s == NNRT_OK;",
        "    return s;",
        "}",
        "",
        f"void {name}_swap_detach(void)",
        "{",
        f"    if ({ctx}_attached) {{",
        f"        nnrt_swap_close(&{ctx});",
        f"        {ctx}_attached = 0;",
        "    }",
        "}",
        "",
        f"nnrt_swap_stats_t {name}_swap_stats(void)",
        "{",
        f"    return nnrt_swap_stats(&{ctx});",
        "}",
    ]


def header_declarations(se: SwapEmit) -> list[str]:
    """Prototypes and constants for ``<name>_model.h``."""
    up = se.name.upper()
    return [
        '#include "nnrt/swap.h"',
        "",
        f"#define {up}_SWAP_CHUNKS {se.swap.chunk_count}u",
        f"#define {up}_SWAP_STAGING_BYTES {se.buffer_bytes}u",
        f"#define {up}_SWAP_EXTERNAL_BYTES {se.swap.external_weight_bytes}u",
        *(["/** PSA key id the device must hold (blob's AEAD, usage DECRYPT). */",
           f"#define {up}_SWAP_KEY_ID 0x{se.key_id:08x}u"] if se.key_id is not None else []),
        "",
        "/** Open the weight blob (<name>_swap.bin) on an external-flash device; invoke()",
        " *  returns NNRT_ERR_IO until this succeeds. Errors as nnrt_swap_open(). */",
        f"nnrt_status_t {se.name}_swap_attach(nnrt_extflash_t *dev);",
        "/** Close the blob (waits for a read in flight, destroys an imported key; a key",
        " *  id's key stays in the key store). */",
        f"void {se.name}_swap_detach(void);",
        "/** Swap counters since attach. */",
        f"nnrt_swap_stats_t {se.name}_swap_stats(void);",
    ]


def invoke_wrapper(se: SwapEmit, inner: str) -> list[str]:
    """``<name>_invoke()``: refuse without a blob, issue chunk 0, run ``inner`` (the
    code generator's invoke, renamed)."""
    return [
        f"static nnrt_status_t {se.name}_invoke(void)",
        "{",
        "    nnrt_status_t s;",
        "",
        f"    if (!{se.ctx}_attached) {{",
        "        return NNRT_ERR_IO;",
        "    }",
        f"    s = nnrt_swap_start(&{se.ctx}, 0u);",
        "    if (s != NNRT_OK) {",
        "        return s;",
        "    }",
        f"    return {inner}();",
        "}",
    ]


# ----- op bodies -----

def _slice_quant(q: Quant | None, c0: int, c1: int) -> Quant | None:
    if q is None or not q.per_channel:
        return q
    return Quant(q.scale[c0:c1], q.zero_point[c0:c1], q.axis)


def _slice_tensor(t: Tensor, index: int, axis: int, c0: int, c1: int) -> Tensor:
    shape = list(t.shape)
    shape[axis] = c1 - c0
    data = None
    if t.data is not None:
        arr = np.take(t.array(), np.arange(c0, c1), axis=axis)
        data = np.ascontiguousarray(arr).tobytes()
    return replace(t, index=index, shape=tuple(shape), data=data,
                   quant=_slice_quant(t.quant, c0, c1), name=f"{t.name}[{c0}:{c1}]")


def _contiguous_slice(graph: Graph, op: Op, chunk: ChunkEntry) -> bool:
    y = graph.tensors[op.outputs[0]]
    d = known(op)
    return (chunk.axis == 0 and d is not None and d.weights is not None
            and d.weights.contiguous_slice
            and len(y.shape) > 0 and y.num_elements == y.shape[-1])


def _need_scratch(graph: Graph, op: Op, scratch: str) -> None:
    if scratch == "NULL" and lowering_for(op).scratch_bytes(graph, op):
        raise PlanError(f"op {op.index} ({op.opcode}): its kernel needs scratch but the "
                        "streamed op was given none",
                        hint="pass the op's planned scratch to streamed_op_body")


def _chunk_lowering(graph: Graph, op: Op, chunk: ChunkEntry, whole: bool,
                    ptr: Callable[[int], str], const_array: ConstArray,
                    scratch: str = "NULL", view_emit: Emit | None = None,
                    slice_buf: str | None = None, acc: str = "") -> list[str]:
    emit = view_emit or lowering_for(op).emit
    w_expr = "((const void *)w_chunk)"
    if whole:
        def ptr_whole(t: int) -> str:
            return w_expr if t == op.inputs[1] else ptr(t)

        if view_emit is None:  # a view lowering takes the scratch the plan gave it
            _need_scratch(graph, op, scratch)
        ctx = EmitContext(graph=graph, op=op, c_ptr=ptr_whole, const_array=const_array,
                          c_scratch=scratch)
        return render(emit(ctx), ctx.pointers, assign="s")
    if view_emit is not None:
        raise PlanError(f"op {op.index} ({op.opcode}): the plan runs it on views, so its "
                        f"weights cannot stream in channel slices (chunk {chunk.index})",
                        hint="keep it internal: SwapOptions(keep_internal=...) "
                        "(nnopt.swap.pipeline.plan_swap_for does)")
    strided = not _contiguous_slice(graph, op, chunk)
    if strided and slice_buf is None:
        raise UnsupportedError(
            f"op {op.index} ({op.opcode}): streaming output channels [{chunk.c0}, "
            f"{chunk.c1}) needs kernels that compute a channel range",
            hint="plan with SwapOptions(kernel_channel_ranges=False) until the conv "
                 "kernels take an output-channel range (scripts/nnopt/swap/README.md)")
    n = len(graph.tensors)
    w = graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    w2 = _slice_tensor(w, n, 0, chunk.c0, chunk.c1)
    y2 = _slice_tensor(y, n + 1, len(y.shape) - 1, chunk.c0, chunk.c1)
    new = [w2, y2]
    inputs = [op.inputs[0], n]
    bias_index = -1
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias_index = n + 2
        new.append(_slice_tensor(graph.tensors[op.inputs[2]], bias_index, 0, chunk.c0,
                                 chunk.c1))
        inputs.append(bias_index)
    g2 = replace(graph, tensors=graph.tensors + tuple(new))
    op2 = replace(op, inputs=tuple(inputs), outputs=(n + 1,))
    elem = y.nbytes // y.num_elements
    y_expr = f"((void *)((uint8_t *){ptr(y.index)} + {chunk.c0 * elem}u))"
    if strided:
        y_expr = f"((void *){slice_buf})"  # dense, copied into its channels below

    sliced: dict[int, str] = {}  # the sliced bias, declared once (pointers are idempotent)

    def ptr_slice(t: int) -> str:
        if t == n:
            return w_expr
        if t == n + 1:
            return y_expr
        if t == bias_index:
            if t not in sliced:
                sliced[t] = f"((const void *){const_array('bias', g2.tensors[t].array())})"
            return sliced[t]
        return ptr(t)

    # the kernels' scratch depends on the input and filter geometry, not on the
    # output channels: the slice needs what the whole op was planned with
    _need_scratch(g2, op2, scratch)
    ctx = EmitContext(graph=g2, op=op2, c_ptr=ptr_slice, const_array=const_array,
                      c_scratch=scratch)
    body = emit(ctx)
    if chunk.k1:
        body = _depth_slice(op, body, chunk, w.shape[1], acc)
    lines = render(body, ctx.pointers, assign="s")
    if strided:
        width = (chunk.c1 - chunk.c0) * elem
        pixels = y.num_elements // y.shape[-1]
        lines += ["if (s == NNRT_OK) {",
                  f"    /* channels [{chunk.c0}, {chunk.c1}) of every output pixel */",
                  f"    s = nnrt_copy_2d_x8((const uint8_t *){slice_buf}, {width}, "
                  f"(uint8_t *){ptr(y.index)} + {chunk.c0 * elem}u, {y.shape[-1] * elem}, "
                  f"{pixels}, {width});", "}"]
    return lines


def _depth_slice(op: Op, body: Body, chunk: ChunkEntry, depth: int, acc: str) -> Body:
    """The sliced op's kernel call made its depth-slice form
    (``nnrt_fully_connected_<t>_depth``, nnrt/kernels/fc.h): the same parameters (the
    block's output channels, the whole depth) and pointers, plus the accumulator, the
    slice [k0, k1) and whether it starts or ends the sum."""
    d = known(op)
    if d is None or d.weights is None or not d.weights.depth_slices or not acc:
        raise PlanError(f"op {op.index} ({op.opcode}): chunk {chunk.index} slices the "
                        "input depth, which this op cannot", hint="plan the swap again")
    flags = ((1 if chunk.k0 == 0 else 0) | (2 if chunk.k1 == depth else 0))
    out: list[object] = []
    calls = 0
    for item in body:
        if isinstance(item, Call):
            calls += 1
            item = replace(item, fn=f"{item.fn}_depth",
                           args=(*item.args, Expr(acc), lit(chunk.k0), lit(chunk.k1),
                                 Literal(flags, f"{flags}u")))
        out.append(item)
    if calls != 1:
        raise PlanError(f"op {op.index} ({op.opcode}): no single kernel call to slice "
                        "along the depth", hint="plan the swap again")
    return out  # type: ignore[return-value]


def streamed_op_body(graph: Graph, op: Op, chunks: Sequence[ChunkEntry], se: SwapEmit,
                     ptr: Callable[[int], str],
                     const_array_for_chunk: Callable[[int], ConstArray],
                     scratch: str = "NULL", view_emit: Emit | None = None) -> list[str]:
    """Body lines of ``static nnrt_status_t op_<k>(void)`` for a streamed op.

    ``ptr``: the emitter's tensor pointer expressions (never asked for the streamed
    filter); ``const_array_for_chunk(k)``: a const-array emitter whose names are unique
    per chunk k (the lowering emits per-chunk multipliers); ``scratch``: the op's
    planned scratch (the kernel variant's columns), as for the non-streamed op;
    ``view_emit``: the plan's own lowering of the op when it runs on views (folded
    padding, in place, row by row), for chunks that cover the whole tensor.
    """
    if not chunks:
        raise PlanError(f"op {op.index} has no chunks")
    w = graph.tensors[op.inputs[1]]
    lines = ["const uint8_t *w_chunk;", "size_t w_len;", "nnrt_status_t s;", ""]
    bodies: list[tuple[ChunkEntry, list[str], set[str]]] = []
    for c in chunks:
        if c.op != op.index or c.tensor != w.index:
            raise PlanError(f"chunk {c.index} is not for op {op.index}")
        whole = c.c0 == 0 and c.c1 == w.shape[c.axis] and not c.k1
        arrays: set[str] = set()
        inner = const_array_for_chunk(c.index)

        def named(suffix: str, arr: np.ndarray, inner: ConstArray = inner,
                  arrays: set[str] = arrays) -> str:
            ident = inner(suffix, arr)
            arrays.add(ident)
            return ident

        acc = (f"{se.name}_acc_f32" if w.dtype == DType.FLOAT32 else f"{se.name}_acc_s32"
               ) if c.k1 else ""
        body = _chunk_lowering(graph, op, c, whole, ptr, named, scratch, view_emit,
                               f"{se.name}_slice" if se.slice_bytes else None, acc)
        bodies.append((c, [
            f"s = nnrt_swap_wait(&{se.ctx}, {c.index}u, &w_chunk, &w_len);",
            "if (s != NNRT_OK) {",
            "    return s;",
            "}",
            f"if (w_len != {c.plain_bytes}u) {{",
            "    return NNRT_ERR_FORMAT;",
            "}",
            "{",
            *["    " + line if line else "" for line in body],
            "}",
            "if (s != NNRT_OK) {",
            "    return s;",
            "}",
        ], arrays))
    for n, run in enumerate(_runs(bodies)):
        if len(run) == 1:
            c, body, _ = run[0]
            lines += [f"/* chunk {c.index}: tensor {c.tensor} channels [{c.c0}, {c.c1}), "
                      f"{c.plain_bytes} B */", *body]
        else:
            lines += _chunk_loop(f"op{op.index}_chunks{n}", run)
    lines.append("return NNRT_OK;")
    return lines


# ----- several chunks of one op: one loop over a const table -----

_TOKEN = re.compile(r"\d+\.\d*(?:[eE][-+]?\d+)?f?|\d+[uU]?|[A-Za-z_]\w*|\s+|\S")
_NUMBER = re.compile(r"\d+[uU]?")
_FLOAT = re.compile(r"\d+\.\d*(?:[eE][-+]?\d+)?f?")


def _tokens(body: list[str]) -> list[str]:
    """The body's C tokens and white space, comment lines left out."""
    code = [x for x in body if not (x.strip().startswith("/*") and x.strip().endswith("*/"))]
    return _TOKEN.findall("\n".join(code))


def _column_type(values: Sequence[str], arrays: set[str]) -> str | None:
    """The C type of a table column holding these tokens (None: they cannot vary)."""
    if all(_NUMBER.fullmatch(v) for v in values):
        unsigned = [v[-1] in "uU" for v in values]
        if all(unsigned) and max(int(v[:-1]) for v in values) < 2**32:
            return "uint32_t"
        if not any(unsigned) and max(int(v) for v in values) < 2**31:
            return "int32_t"
        return None
    if all(_FLOAT.fullmatch(v) and v.endswith("f") for v in values):
        return "float"
    if all(v in arrays for v in values):
        return "const void *"  # a const array of the chunk (converts to its pointer type)
    return None


def _differing(a: list[str], b: list[str], arrays: set[str]) -> list[int] | None:
    if len(a) != len(b):
        return None
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if any(_column_type((a[i], b[i]), arrays) is None for i in diff):
        return None
    return diff


def _runs(bodies: list[tuple[ChunkEntry, list[str], set[str]]]
          ) -> list[list[tuple[ChunkEntry, list[str], set[str]]]]:
    """Consecutive chunks whose code differs only in numbers and the chunk's own const
    arrays (the same lowering on another channel range): one loop each."""
    runs: list[list[tuple[ChunkEntry, list[str], set[str]]]] = []
    first: list[str] = []
    for item in bodies:
        toks = _tokens(item[1])
        if runs:
            arrays = set().union(*(x[2] for x in runs[-1]), item[2])
            if _differing(first, toks, arrays) is not None:
                runs[-1].append(item)
                continue
        runs.append([item])
        first = toks
    return runs


def _chunk_loop(tab: str, run: list[tuple[ChunkEntry, list[str], set[str]]]) -> list[str]:
    """The run's code once, in a loop over a const table of what differs per chunk
    (chunk index, lengths, channel offsets, the chunk's const arrays): code size per
    layer instead of per chunk (1,556 unrolled chunk calls of ResNet-50 at 16 KB
    staging were about 340 KB of code)."""
    toks = [_tokens(body) for _, body, _ in run]
    arrays: set[str] = set().union(*(x[2] for x in run))
    cols = sorted({i for t in toks[1:] for i in (_differing(toks[0], t, arrays) or [])})
    types = [_column_type([t[i] for t in toks], arrays) for i in cols]
    assert all(ty is not None for ty in types)
    template = list(toks[0])
    for j, i in enumerate(cols):
        template[i] = f"{tab}[k].v{j}"
    body = "".join(template).split("\n")
    # a static const block that now reads the table is built per chunk instead
    out_body: list[str] = []
    in_block = False
    block: list[str] = []
    for line in body:
        opens = line.lstrip().startswith("static const ") and line.rstrip().endswith("{")
        if not in_block and opens:
            in_block, block = True, [line]
            continue
        if in_block:
            block.append(line)
            if line.strip() == "};":
                in_block = False
                if any(f"{tab}[k]" in x for x in block):
                    block[0] = block[0].replace("static const ", "const ", 1)
                out_body += block
            continue
        out_body.append(line)
    first, last = run[0][0], run[-1][0]
    fields = " ".join(f"{ty}{'' if str(ty).endswith('*') else ' '}v{j};"
                      for j, ty in enumerate(types))
    rows = [", ".join(t[i] for i in cols) for t in toks]
    return [
        f"/* chunks {first.index}..{last.index}: tensor {first.tensor} channels "
        f"[{first.c0}, {last.c1}) in {len(run)} slices, one loop over their table */",
        f"static const struct {{ {fields} }} {tab}[{len(run)}] = {{",
        *[f"    {{{r}}}," for r in rows],
        "};",
        f"for (uint32_t k = 0; k < {len(run)}u; ++k) {{",
        *["    " + line if line else "" for line in out_body],
        "}",
    ]


# ----- a complete model with streamed ops (an extension of the model emitter) -----

def _streamed_function(se: SwapEmit, streamed: dict[int, list[ChunkEntry]],
                       em: ModelEmitter, op: Op) -> str:
    """``op_<k>()`` of a streamed op, over the emitter's pointers and constants."""
    view = em.views.lowering_for(op)  # the plan's sub-view lowering, if any
    em.headers.update((view or lowering_for(op)).headers)

    def const_arrays(k: int) -> ConstArray:
        inner: ConstArray = em.const_array_for(op.index)

        def const_array(suffix: str, arr: np.ndarray) -> str:
            return inner(f"c{k}_{suffix}", arr)
        return const_array

    body = streamed_op_body(em.g, op, streamed[op.index], se, em.ptr, const_arrays,
                            em.scratch_ptr(op.index),
                            view.emit if view is not None else None)
    return (f"/* op {op.index}: {op.opcode}, weights streamed */\n"
            f"static nnrt_status_t op_{op.index}(void)\n{{\n"
            + "\n".join("    " + line if line else "" for line in body)
            + "\n}\n")


def _check_not_staged(streamed: dict[int, list[ChunkEntry]], em: ModelEmitter) -> None:
    for idx in streamed:
        if em.stages.call(idx) is not None:
            raise PlanError(f"op {idx} streams its weights but the plan runs it in a "
                            "tiled stage",
                            hint="plan the swap with SwapOptions(keep_internal=...) "
                            "(nnopt.swap.pipeline.plan_swap_for does)")


def swap_extension(se: SwapEmit) -> Extension:
    """The model emitter's extension that streams the swap plan's weights."""
    streamed: dict[int, list[ChunkEntry]] = {}
    for c in se.swap.chunks:
        if c.op not in se.banded:
            streamed.setdefault(c.op, []).append(c)
    return Extension(
        attach=f"{se.name}_swap_attach",
        headers=("nnrt/swap.h", *(("nnrt/kernels/tiling.h",) if se.slice_bytes else ()),
                 *(("nnrt/kernels/fc_depth.h",) if se.acc_f32 or se.acc_s32 else ())),
        own_ops=frozenset(streamed),
        op_function=lambda em, op: _streamed_function(se, streamed, em, op),
        declarations=lambda: ["\n".join(declarations(se))],
        external=frozenset(se.swap.external_tensors),
        inner_invoke=f"{se.name}_invoke_ops",
        invoke_wrapper=lambda inner: invoke_wrapper(se, inner),
        header_lines=tuple(header_declarations(se)),
        check=lambda em: _check_not_staged(streamed, em))


@dataclass(frozen=True)
class SwapSources:
    sources: GeneratedSources
    blob: Path
    layout_id: bytes


def generate_swapped(planned: PlannedModel, out_dir: Path, swap: SwapPlan, key: bytes,
                     name: str | None = None, salt: bytes | None = None,
                     key_id: int | None = None) -> SwapSources:
    """Write ``<name>_model.c/.h`` with streamed ops and ``<name>_swap.bin`` (sealed
    with ``key``). With ``key_id`` the sources open the blob by that PSA key id and
    contain no key byte; else ``key`` is compiled in."""
    if not swap.enabled:
        raise PlanError("the swap plan streams nothing", hint="use --swap force or auto")
    if key_id is not None:
        parse_key_id(str(key_id))  # PSA's application range, else KeyStoreError
    ident = name or planned.plan.model
    out_dir.mkdir(parents=True, exist_ok=True)
    lid = swap_layout_id(swap, planned.plan.source_sha256)
    acc_f32, acc_s32 = accumulator_units(planned.graph, swap)
    band_pixels = {st.ops[0]: max((r[1] - r[0]) * (r[3] - r[2]) for r in st.tiles[-1].regions)
                   for st in planned.plan.bands}
    se = SwapEmit(ident, swap, None if key_id is not None else key, lid, key_id=key_id,
                  slice_bytes=slice_buffer_bytes(planned.graph, swap, band_pixels),
                  acc_f32=acc_f32, acc_s32=acc_s32, banded=frozenset(band_pixels))
    em = ModelEmitter(planned, ident, extension=swap_extension(se))
    c_text = em.c_source()
    c_file = out_dir / f"{ident}_model.c"
    h_file = out_dir / f"{ident}_model.h"
    c_file.write_text(c_text)
    h_file.write_text(em.h_source(c_text))
    wb = write_model_blob(out_dir / f"{ident}_swap.bin", planned.graph, swap,
                          planned.plan.source_sha256, key, salt=salt)
    assert wb.layout_id == lid
    return SwapSources(GeneratedSources(c_file, h_file, f"{ident}_model"), wb.path, lid)
