"""Serialise a planned model into a model blob (format: :mod:`nnopt.blob.schema`), and
read one back (:func:`parse_blob`, for tests and inspection).

The blob carries what the runtime loader (``modules/nnrt/src/loader``) needs to run
the model with the same kernels as generated code and no regenerated C:

- the tensors (activations with their allocator handle, constants with their data);
- per step of the Plan's schedule: the kernel, its parameter record (the values of the
  call the op's lowering returns, :mod:`nnopt.lowering.call`, encoded by
  :func:`capture` and the schema: the same object the C renderer writes), its tensor
  arguments, and the dynamic allocator's events around it exactly as the dynamic plan
  the planned model carries lays them out (``PlannedModel.facts``, recorded by
  :func:`nnopt.planner.with_dynamic`; so the loader's high-water mark and bytes moved
  are the same as the generated dynamic mode's);
- the model inputs and outputs with shape and quantisation.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from ..arith import align
from ..cdefs import DType
from ..errors import BlobError, UnsupportedError
from ..ir import NUMPY_DTYPE, Graph, Op
from ..lowering import EmitContext
from ..lowering.call import (
    AddressOf,
    Body,
    Call,
    Dec,
    Done,
    Expr,
    Grouped,
    Literal,
    Params,
    PtrList,
    Raw,
    ScratchArg,
    TensorArg,
)
from ..ops import DEFINITIONS, lowering_for
from ..ops.base import Kernel
from ..planner import PlannedModel
from . import schema as S


@dataclass(frozen=True)
class ArrayRef:
    name: str  # a constant array the lowering made with ctx.const_array


@dataclass(frozen=True)
class StructRef:
    name: str  # a Params or Const of the body


@dataclass(frozen=True)
class TensorList:
    """The tensors of a PtrList (variable-arity kernels such as CONCATENATION)."""

    items: tuple[int, ...]


Value: TypeAlias = (int | float | ArrayRef | StructRef | TensorArg | ScratchArg | TensorList
                    | list["Value"] | dict[str, "Value"] | None)

_SCALAR_TYPES = {"int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32,
                 "float": np.float32}


@dataclass
class Capture:
    """An op's body as the blob encodes it: its structs, scalars, pointer lists and its
    one kernel call, with the constant arrays the lowering made."""

    arrays: dict[str, np.ndarray]
    structs: dict[str, tuple[str, dict[str, Value]]] = field(default_factory=dict)
    scalars: dict[str, np.ndarray] = field(default_factory=dict)
    lists: dict[str, tuple[int, ...]] = field(default_factory=dict)
    function: str = ""
    args: list[Value] = field(default_factory=list)
    no_op: bool = False  # nothing to run (e.g. an empty output)


class _Refuse(Exception):
    pass


def _value(v: object, cap: Capture) -> Value:
    """A field value or call argument (:mod:`nnopt.lowering.call`) as the encoder reads it."""
    if isinstance(v, Raw):
        if v.text == "NULL":
            return None
        if v.text in cap.lists:
            return TensorList(cap.lists[v.text])
        if v.text in cap.arrays:
            return ArrayRef(v.text)
        raise _Refuse(f"unknown identifier {v.text!r}")
    if isinstance(v, AddressOf):
        return StructRef(v.name)
    if isinstance(v, TensorArg):
        return TensorArg(v.index)
    if isinstance(v, ScratchArg) or v is None:
        return v
    if isinstance(v, (Dec, Literal)):
        return _value(v.value, cap)
    if isinstance(v, Expr):
        raise _Refuse(f"a computed pointer {v.text!r}")
    if isinstance(v, Grouped):
        return _value(v.fields, cap)
    if isinstance(v, Mapping):
        return {str(k): _value(x, cap) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_value(x, cap) for x in v]
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(np.float32(v))
    raise _Refuse(f"no blob encoding for {v!r}")


def _collect(body: Body, cap: Capture) -> Capture:
    for st in body:
        if isinstance(st, Params) and not isinstance(st.fields, Mapping):
            if st.ctype not in _SCALAR_TYPES:
                raise _Refuse(f"a {st.ctype} constant")
            cap.scalars[st.name] = np.array([st.fields], dtype=_SCALAR_TYPES[st.ctype])
        elif isinstance(st, Params):
            fields = _value(st.fields, cap)
            assert isinstance(fields, dict)
            cap.structs[st.name] = (st.ctype, fields)
        elif isinstance(st, PtrList):
            cap.lists[st.name] = tuple(t.index for t in st.items)
        elif isinstance(st, Call):
            if cap.function:
                raise _Refuse("more than one kernel call")
            cap.function = st.fn
            cap.args = [_value(a, cap) for a in st.args]
        elif isinstance(st, Done):
            cap.no_op = True
        else:
            raise _Refuse("code around kernel calls")
    if not cap.function and not cap.no_op:
        raise _Refuse("no kernel call")
    return cap


def capture(graph: Graph, op: Op) -> Capture:
    """The op's kernel call as the lowering returns it, with the constant arrays it made
    (the call's tensors are tensor indices; nothing is rendered)."""
    arrays: dict[str, np.ndarray] = {}

    def const_array(suffix: str, arr: np.ndarray) -> str:
        name = f"blob_{suffix}_{len(arrays)}"
        arrays[name] = np.asarray(arr)
        return name

    ctx = EmitContext(graph=graph, op=op, c_ptr=lambda t: f"/* tensor {t} */",
                      const_array=const_array, c_scratch="/* scratch */")
    try:
        return _collect(lowering_for(op).emit(ctx), Capture(arrays))
    except _Refuse as err:
        raise UnsupportedError(
            f"op {op.index} ({op.opcode}): the model blob cannot represent its kernel "
            f"call ({err})", hint="use the generated C (--emit c) for this model") from None


def supported_opcodes() -> list[str]:
    return sorted(d.opcode for d in DEFINITIONS.values() if d.blob)


@dataclass
class _Builder:
    graph: Graph
    constants: dict[int, bytes]  # tensor index -> data (graph constants and extra arrays)
    extra: list[tuple[int, np.ndarray]]  # pseudo tensors: (index, array)
    records: bytearray
    dtypes: dict[int, DType] = field(default_factory=dict)  # of the pseudo tensors
    scratch: dict[int, tuple[int, int]] = field(default_factory=dict)  # index: handle, size

    def scratch_tensor(self, handle: int, size: int) -> int:
        """A pseudo activation tensor for an op's scratch buffer (its allocator handle)."""
        index = len(self.graph.tensors) + len(self.extra)
        self.extra.append((index, np.zeros(0, dtype=np.int8)))
        self.scratch[index] = (handle, size)
        return index

    def array_tensor(self, arr: np.ndarray, dtypes: tuple[DType, ...] = (DType.INT32,)) -> int:
        """A constant pseudo tensor holding a parameter array (after the model's own)."""
        a = np.asarray(arr)
        dt = next((d for d in DType if np.dtype(NUMPY_DTYPE[d]) == a.dtype), None)
        if dt is None or dt not in dtypes:
            raise UnsupportedError(f"a parameter array of dtype {a.dtype} is not in the "
                                   "blob format here (" + ", ".join(
                                       d.name.lower() for d in dtypes) + ")")
        index = len(self.graph.tensors) + len(self.extra)
        self.extra.append((index, a))
        self.dtypes[index] = dt
        self.constants[index] = a.astype(a.dtype.newbyteorder("<")).tobytes()
        return index


def _lookup(values: dict[str, Value], path: str) -> Value:
    v: Value = values
    for part in path.split("."):
        name, _, index = part.partition("[")
        if not isinstance(v, dict) or name not in v:
            raise KeyError(path)
        v = v[name]
        if index:
            if not isinstance(v, list):
                raise KeyError(path)
            v = v[int(index[:-1])]
    return v


def _flat_paths(values: dict[str, Value], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for k, v in values.items():
        if isinstance(v, dict):
            out |= _flat_paths(v, f"{prefix}{k}.")
        elif isinstance(v, list):
            out |= {f"{prefix}{k}[{i}]" for i in range(len(v))}
        else:
            out.add(f"{prefix}{k}")
    return out


def _word(kind: str, v: Value, b: _Builder, cap: Capture, where: str) -> bytes:
    if kind == S.I32 or kind == "u32":
        if not isinstance(v, int) or isinstance(v, bool):
            raise UnsupportedError(f"{where}: expected an integer, found {v!r}")
        lo, hi = (-(2**31), 2**31 - 1) if kind == S.I32 else (0, 2**32 - 1)
        if not lo <= v <= hi:
            raise UnsupportedError(f"{where}: {v} does not fit {kind}")
        return struct.pack("<I", v & 0xFFFFFFFF)
    if kind == S.F32:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise UnsupportedError(f"{where}: expected a number, found {v!r}")
        return struct.pack("<f", float(v))
    if kind == S.REF:
        if not isinstance(v, ArrayRef) or v.name not in cap.arrays:
            raise UnsupportedError(f"{where}: expected a constant array, found {v!r}")
        return struct.pack("<I", b.array_tensor(cap.arrays[v.name]))
    raise AssertionError(kind)  # pragma: no cover


def _struct_words(ctype: str, values: dict[str, Value], b: _Builder, cap: Capture,
                  where: str) -> tuple[bytes, str | None]:
    """The record words of a struct and the name of its optional struct (or None)."""
    want = {p for p, _ in S.flat_fields(ctype)}
    got = _flat_paths(values)
    if want != got:
        raise UnsupportedError(
            f"{where}: {ctype} fields differ from the blob schema (missing "
            f"{sorted(want - got)}, unknown {sorted(got - want)})",
            hint="update scripts/nnopt/blob/schema.py with the kernel's header")
    out = b""
    opt: str | None = None
    for path, kind in S.flat_fields(ctype):
        v = _lookup(values, path)
        if kind == S.OPT:
            if v is None:
                out += struct.pack("<I", 0)
            elif isinstance(v, StructRef) and v.name in cap.structs:
                out += struct.pack("<I", 1)
                opt = v.name
            else:
                raise UnsupportedError(f"{where}: {path} = {v!r} is not a struct reference")
        else:
            out += _word(kind, v, b, cap, f"{where}: {ctype}.{path}")
    return out, opt


def _encode_call(graph: Graph, op_index: int, cap: Capture, b: _Builder,
                 scratch: tuple[int, int] | None) -> tuple[Kernel, bytes, list[int]]:
    """(kernel, parameter record, tensor arguments) of a captured call."""
    where = f"op {op_index} ({graph.op_by_index[op_index].opcode})"
    args = list(cap.args)
    function = cap.function
    if function in S.EQUIVALENT:  # same results, no scratch: run the reference kernel
        function = S.EQUIVALENT[function]
        args = [a for a in args if not isinstance(a, ScratchArg)]
    kernel = S.KERNEL_BY_FUNCTION.get(function)
    if kernel is None:
        op = graph.op_by_index[op_index]
        d = DEFINITIONS.get(op.opcode)
        carried = ", ".join(k.function for k in d.kernels) if d is not None else ""
        dtype = graph.tensors[op.outputs[0]].dtype.name.lower() if op.outputs else "?"
        raise UnsupportedError(
            f"{where}: its {dtype} kernel {cap.function} is not in the model blob format "
            "yet",
            hint=(f"the blob carries {op.opcode} through {carried}" if carried
                  else "ops the blob can carry: " + ", ".join(supported_opcodes()))
            + "; use the generated C (--emit c; --allocator dynamic works there too) for "
            "this model")
    if len(args) != len(kernel.args):
        raise UnsupportedError(f"{where}: {cap.function} called with {len(args)} "
                               f"arguments, the blob schema has {len(kernel.args)}")
    record = b""
    optional = b""
    scalars = b""
    tensors: list[int] = []
    for spec, arg in zip(kernel.args, args, strict=True):
        if spec.startswith("struct:"):
            ctype = spec.split(":", 1)[1]
            if not isinstance(arg, StructRef) or arg.name not in cap.structs:
                raise UnsupportedError(f"{where}: expected &<{ctype}>, found {arg!r}")
            got_type, values = cap.structs[arg.name]
            if got_type != ctype:
                raise UnsupportedError(f"{where}: expected {ctype}, found {got_type}")
            words, opt = _struct_words(ctype, values, b, cap, where)
            record += words
            if opt is not None:
                otype, ovalues = cap.structs[opt]
                if otype != S.OPTIONAL_STRUCT.get(ctype):
                    raise UnsupportedError(f"{where}: unexpected optional struct {otype}")
                optional, _ = _struct_words(otype, ovalues, b, cap, where)
        elif spec == "tensors":
            if not isinstance(arg, TensorList) or not 1 <= len(arg.items) <= S.MAX_LIST_ARGS:
                raise UnsupportedError(f"{where}: expected 1..{S.MAX_LIST_ARGS} tensors, "
                                       f"found {arg!r}")
            tensors += list(arg.items)
        elif spec.startswith("tensor"):
            if arg is None and spec.endswith("?"):
                tensors.append(S.NONE16)
            elif isinstance(arg, TensorArg):
                tensors.append(arg.index)
            elif isinstance(arg, ScratchArg) and scratch is not None:
                tensors.append(b.scratch_tensor(*scratch))
            elif isinstance(arg, StructRef) and arg.name in cap.scalars:  # &pad_value
                tensors.append(b.array_tensor(cap.scalars[arg.name],
                                              (DType.INT8, DType.INT16, DType.INT32,
                                               DType.FLOAT32)))
            elif isinstance(arg, ArrayRef) and arg.name in cap.arrays:  # e.g. a lookup table
                tensors.append(b.array_tensor(cap.arrays[arg.name],
                                              (DType.INT8, DType.INT16, DType.INT32)))
            else:
                raise UnsupportedError(f"{where}: expected a tensor, found {arg!r}")
        else:
            scalars += _word(spec, arg, b, cap, f"{where}: scalar argument")
    return kernel, record + scalars + optional, tensors


def write_blob(planned: PlannedModel) -> bytes:
    """The model blob of a planned model that carries its dynamic plan
    (:func:`nnopt.planner.with_dynamic`). Raises UnsupportedError naming every op whose
    kernel the format cannot carry."""
    g, plan = planned.graph, planned.plan
    if plan.state:
        names = ", ".join(f"tensor {e.tensor}" + (f" ({g.tensors[e.tensor].name})"
                                                  if g.tensors[e.tensor].name else "")
                          for e in plan.state[:4]) + (", ..." if len(plan.state) > 4 else "")
        raise UnsupportedError(
            f"model {plan.model} is stateful ({plan.state_bytes:,} bytes in "
            f"{len(plan.state)} variable tensor(s): {names}); the model blob format has "
            "no persistent state region",
            hint="use the generated C (--emit c), which keeps the state beside the arena "
            "and has <model>_reset()")
    wide = [t for t in g.tensors if t.dtype > DType.BOOL]  # the loader's last dtype
    if wide:
        raise UnsupportedError(
            f"model {plan.model} has {wide[0].dtype.name.lower()} tensor {wide[0].index} "
            f"({wide[0].name}); the model blob format carries tensors up to bool",
            hint="use the generated C (--emit c), which converts float64/int64 model "
            "inputs and outputs at the boundary")
    facts = planned.facts  # recorded by the planner: the blob writer derives nothing
    dyn = facts.dynamic_events()
    b = _Builder(g, {}, [], bytearray())

    steps: list[tuple[int, int, int, int, list[int], list[int], list[int], list[int]]] = []
    problems: list[str] = []
    hints: list[str] = []
    for step in dyn.steps:
        op = g.op_by_index[step.op]
        trace = list(op.outputs)
        if step.op in facts.aliased_ops:
            steps.append((S.KERNEL_NONE, step.op, 0, 0, [], list(step.alloc),
                          list(step.free), trace))
            continue
        try:
            cap = capture(g, op)
            if cap.no_op:
                steps.append((S.KERNEL_NONE, step.op, 0, 0, [], list(step.alloc),
                              list(step.free), trace))
                continue
            sh = dyn.scratch_handle.get(step.op)
            kernel, record, args = _encode_call(
                g, step.op, cap, b, None if sh is None else (sh, dyn.blocks[sh].size))
        except UnsupportedError as err:
            problems.append(err.message)
            if err.hint and err.hint not in hints:
                hints.append(err.hint)
            continue
        off = len(b.records)
        b.records += record
        steps.append((kernel.id, step.op, off, len(record), args, list(step.alloc),
                      list(step.free), trace))
    if problems:
        raise UnsupportedError(
            "the model cannot be written as a blob: " + "; ".join(problems[:8])
            + (f"; and {len(problems) - 8} more" if len(problems) > 8 else ""),
            hint="; ".join(hints[:3]) if hints else "ops the blob can carry: "
            + ", ".join(supported_opcodes()) + "; use the generated C (--emit c) for this "
            "model")

    n_tensors = len(g.tensors) + len(b.extra)
    if n_tensors >= S.NONE16 or len(dyn.blocks) >= S.NONE16 or len(steps) > 0xFFFF:
        raise UnsupportedError(f"the model has {n_tensors} tensors, {len(dyn.blocks)} "
                               f"buffers and {len(steps)} steps; the blob format holds "
                               "at most 65534 of each")
    used_consts = {a for s in steps for a in s[4] if a != S.NONE16 and a < len(g.tensors)
                   and g.tensors[a].is_constant}
    for t in sorted(used_consts):
        cdata = g.tensors[t].data
        assert cdata is not None
        b.constants[t] = cdata

    # data section: parameter records, then constants (16-aligned)
    data = bytearray(b.records)
    const_off: dict[int, int] = {}
    for t in sorted(b.constants):
        data += bytes(align(len(data), S.DATA_ALIGN) - len(data))
        const_off[t] = len(data)
        data += b.constants[t]

    # a view (split-like op output) sits at its byte offset within its root's block
    entry = {e.tensor: e for e in plan.buffers}
    in_block = {e.tensor: e.offset - entry[e.alias_of].offset
                for e in plan.buffers if e.alias_of is not None}
    tensor_tab = bytearray()
    for t in range(n_tensors):
        if t in b.scratch:
            handle, size = b.scratch[t]
            tensor_tab += struct.pack("<IBBHII", size, int(DType.INT8), S.KIND_ACTIVATION,
                                      handle, 0, 0)
        elif t < len(g.tensors) and not g.tensors[t].is_constant and t in dyn.handle_of:
            tt = g.tensors[t]
            tensor_tab += struct.pack("<IBBHII", tt.nbytes, int(tt.dtype), S.KIND_ACTIVATION,
                                      dyn.handle_of[t], in_block.get(t, 0), 0)
        elif t in const_off:
            nbytes = len(b.constants[t])
            dt = int(g.tensors[t].dtype) if t < len(g.tensors) else int(b.dtypes[t])
            tensor_tab += struct.pack("<IBBHII", nbytes, dt, S.KIND_CONSTANT, S.NONE16,
                                      const_off[t], 0)
        else:
            tensor_tab += struct.pack("<IBBHII", 0, 0, S.KIND_UNUSED, S.NONE16, 0, 0)
    handle_tab = b"".join(struct.pack("<I", blk.size) for blk in dyn.blocks)
    lists: list[int] = []
    step_tab = bytearray()
    for kid, op_index, poff, plen, args, allocs, frees, trace in steps:
        step_tab += struct.pack("<HHIIIHHHH", kid, op_index, poff, plen, len(lists), len(args),
                                len(allocs), len(frees), len(trace))
        lists += args + allocs + frees + trace
    io_tab = bytearray()
    for t in (*g.inputs, *g.outputs):
        tt = g.tensors[t]
        dims = list(tt.shape) + [0] * (6 - len(tt.shape))
        scale = tt.quant.scale[0] if tt.quant else 0.0
        zp = tt.quant.zero_point[0] if tt.quant else 0
        io_tab += struct.pack("<HBB6ifiI", t, int(tt.dtype), len(tt.shape), *dims, scale, zp,
                              tt.nbytes)

    sections: list[bytes] = [bytes(tensor_tab), handle_tab, bytes(step_tab), bytes(io_tab),
                             b"".join(struct.pack("<H", x) for x in lists)]
    offsets = []
    pos = S.HEADER_BYTES
    body = bytearray()
    for sec in sections:
        offsets.append(pos)
        body += sec
        pos += len(sec)
        pad = align(pos, 4) - pos
        body += bytes(pad)
        pos += pad
    data_off = align(pos, S.DATA_ALIGN)
    body += bytes(data_off - pos)
    total = data_off + len(data)
    fields = {
        "magic": int.from_bytes(S.MAGIC, "little"), "version": S.FORMAT_VERSION,
        "header_bytes": S.HEADER_BYTES, "total_bytes": total, "crc32": 0, "flags": 0,
        "arena_bytes": dyn.arena_bytes, "n_tensors": n_tensors, "n_handles": len(dyn.blocks),
        "n_steps": len(steps), "n_inputs": len(g.inputs), "n_outputs": len(g.outputs),
        "reserved": 0, "tensors_off": offsets[0], "handles_off": offsets[1],
        "steps_off": offsets[2], "io_off": offsets[3], "lists_off": offsets[4],
        "n_list": len(lists), "data_off": data_off,
    }
    header = struct.pack(S.HEADER_STRUCT, *(fields[n] for n, _, _ in S.HEADER_FIELDS))
    blob = bytearray(header + body + data)
    assert len(blob) == total
    return bytes(seal(blob))


def seal(blob: bytearray | bytes) -> bytes:
    """The blob with its CRC-32 field recomputed (also for tests that craft blobs)."""
    out = bytearray(blob)
    out[12:16] = b"\0\0\0\0"
    out[12:16] = struct.pack("<I", zlib.crc32(bytes(out)) & 0xFFFFFFFF)
    return bytes(out)


# ----- reading (tests, inspection) -----

@dataclass(frozen=True)
class BlobStep:
    kernel: int
    op: int
    params: bytes
    args: tuple[int, ...]
    alloc: tuple[int, ...]
    free: tuple[int, ...]
    trace: tuple[int, ...]


@dataclass(frozen=True)
class ParsedBlob:
    header: dict[str, int]
    tensors: tuple[tuple[int, int, int, int, int], ...]  # bytes, dtype, kind, handle, off
    handles: tuple[int, ...]
    steps: tuple[BlobStep, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def parse_blob(data: bytes) -> ParsedBlob:
    """Parse and check the framing of a blob (header, CRC, table bounds); raises
    BlobError. The C loader checks much more (parameters against tensors)."""
    if len(data) < S.HEADER_BYTES or data[:4] != S.MAGIC:
        raise BlobError("not a model blob (bad magic or shorter than its header)")
    h = dict(zip((n for n, _, _ in S.HEADER_FIELDS), struct.unpack_from(S.HEADER_STRUCT, data),
                 strict=True))
    if h["version"] != S.FORMAT_VERSION:
        raise BlobError(f"model blob format version {h['version']}, this nnopt reads "
                        f"{S.FORMAT_VERSION}")
    if h["total_bytes"] > len(data) or h["total_bytes"] < S.HEADER_BYTES:
        raise BlobError(f"model blob truncated: {len(data)} of {h['total_bytes']} bytes")
    blob = data[:h["total_bytes"]]
    if seal(blob)[12:16] != blob[12:16]:
        raise BlobError("model blob checksum mismatch: the blob is corrupt")

    def table(off: int, n: int, size: int) -> Sequence[bytes]:
        if off + n * size > h["data_off"]:
            raise BlobError("model blob table out of bounds")
        return [blob[off + i * size: off + (i + 1) * size] for i in range(n)]

    tensors = tuple(struct.unpack("<IBBHII", r)[:5]
                    for r in table(h["tensors_off"], h["n_tensors"], S.TENSOR_BYTES))
    handles = tuple(struct.unpack("<I", r)[0] for r in table(h["handles_off"], h["n_handles"], 4))
    lists = [struct.unpack("<H", r)[0] for r in table(h["lists_off"], h["n_list"], 2)]
    d0 = h["data_off"]
    steps = []
    for r in table(h["steps_off"], h["n_steps"], S.STEP_BYTES):
        k, op, poff, plen, first, na, nal, nf, nt = struct.unpack("<HHIIIHHHH", r)
        ls = lists[first:first + na + nal + nf + nt]
        steps.append(BlobStep(k, op, blob[d0 + poff:d0 + poff + plen], tuple(ls[:na]),
                              tuple(ls[na:na + nal]), tuple(ls[na + nal:na + nal + nf]),
                              tuple(ls[na + nal + nf:])))
    io = [struct.unpack_from("<H", r)[0]
          for r in table(h["io_off"], h["n_inputs"] + h["n_outputs"], S.IO_BYTES)]
    return ParsedBlob(h, tensors, handles, tuple(steps), tuple(io[:h["n_inputs"]]),
                      tuple(io[h["n_inputs"]:]))
