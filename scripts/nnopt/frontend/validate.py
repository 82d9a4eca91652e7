"""Import-time checks of a TFLite model: every flatbuffer offset and length nnopt reads lies
inside the file, and every quantisation parameter is one the generated C can hold.

The ``tflite`` package reads flatbuffers without a verifier: an offset past the end raises
somewhere deep inside it, and a vtable offset pointing *before* the start is a negative
Python index that silently reads from the end of the file. :func:`check_flatbuffer` walks
the tables nnopt reads (schema: tensorflow/compiler/mlir/lite/schema/schema.fbs) before
anything is parsed; :func:`check_quantization` checks the parsed graph. Both raise
:class:`~nnopt.errors.ModelError` naming the table, tensor or op, with a hint.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import tflite

from ..cdefs import DType
from ..errors import ModelError
from ..ir import Graph, Tensor

_HINT: Final = "the file is corrupt: re-export the model; check that it was copied completely"
_QHINT: Final = ("the model's quantisation parameters are corrupt: re-export it with the "
                 "TFLite converter (full-integer post-training quantisation)")

# ----- flatbuffer structure -----

@dataclass(frozen=True)
class _Table:
    """The fields nnopt reads from one flatbuffer table, by vtable slot: scalars (byte size),
    strings, vectors of scalars (element size), sub-tables, vectors of tables, and unions
    (builtin options: a table whose every field must lie inside it; its type is the slot
    before)."""

    name: str
    scalars: dict[int, int] = field(default_factory=dict)  # slot -> byte size
    strings: tuple[int, ...] = ()
    vectors: dict[int, int] = field(default_factory=dict)  # slot -> element byte size
    tables: dict[int, _Table] = field(default_factory=dict)
    table_vectors: dict[int, _Table] = field(default_factory=dict)
    unions: tuple[int, ...] = ()


_QUANT = _Table("QuantizationParameters", scalars={4: 1, 6: 4}, vectors={0: 4, 1: 4, 2: 4, 3: 8})
_TENSOR = _Table("Tensor", scalars={1: 1, 2: 4, 5: 1, 8: 1}, strings=(3,),
                 vectors={0: 4, 7: 4}, tables={4: _QUANT})
_OPERATOR = _Table("Operator", scalars={0: 4, 3: 1, 6: 1}, vectors={1: 4, 2: 4, 5: 1, 7: 1, 8: 4},
                   unions=(4,))
_SUBGRAPH = _Table("SubGraph", strings=(4,), vectors={1: 4, 2: 4},
                   table_vectors={0: _TENSOR, 3: _OPERATOR})
_BUFFER = _Table("Buffer", scalars={1: 8, 2: 8}, vectors={0: 1})
_OPCODE = _Table("OperatorCode", scalars={0: 1, 2: 4, 3: 4}, strings=(1,))
_MODEL = _Table("Model", scalars={0: 4}, strings=(3,),
                table_vectors={1: _OPCODE, 2: _SUBGRAPH, 4: _BUFFER})
_SQUEEZE_OPTIONS: Final = int(tflite.BuiltinOptions.SqueezeOptions)  # has a vector: squeeze_dims


class _Reader:
    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.size = len(data)
        self.source = source

    def fail(self, what: str) -> ModelError:
        return ModelError(f"{self.source} is a corrupt model: {what}", hint=_HINT)

    def u32(self, pos: int, what: str) -> int:
        if not 0 <= pos <= self.size - 4:
            raise self.fail(f"{what}: offset {pos} outside the file ({self.size} bytes)")
        return int(struct.unpack_from("<I", self.data, pos)[0])

    def ref(self, pos: int, what: str) -> int:
        """The position a uoffset at ``pos`` points to."""
        target = pos + self.u32(pos, what)
        if target > self.size - 4:
            raise self.fail(f"{what}: offset points to {target}, outside the file "
                            f"({self.size} bytes)")
        return target

    def vector(self, pos: int, elem: int, what: str) -> tuple[int, int]:
        """(first element position, length) of the vector a uoffset at ``pos`` points to."""
        start = self.ref(pos, what)
        n = self.u32(start, what)
        if n * elem > self.size - start - 4:
            raise self.fail(f"{what}: {n} elements of {elem} bytes at {start} run past the end "
                            f"of the file ({self.size} bytes)")
        return start + 4, n

    def table(self, pos: int, spec: _Table, what: str, type_code: int | None = None) -> None:
        """Check the table at ``pos`` and, recursively, every field of ``spec``."""
        if not 0 <= pos <= self.size - 4:
            raise self.fail(f"{what}: table at {pos} outside the file")
        vt = pos - struct.unpack_from("<i", self.data, pos)[0]
        if not 0 <= vt <= self.size - 4:
            raise self.fail(f"{what}: vtable at {vt} outside the file")
        vt_size, t_size = struct.unpack_from("<HH", self.data, vt)
        if vt_size < 4 or vt_size % 2 or vt + vt_size > self.size:
            raise self.fail(f"{what}: vtable of {vt_size} bytes at {vt} is malformed")
        if t_size < 4 or pos + t_size > self.size:
            raise self.fail(f"{what}: table of {t_size} bytes at {pos} runs past the end")
        slots = (vt_size - 4) // 2
        offsets = struct.unpack_from(f"<{slots}H", self.data, vt + 4)
        for slot, off in enumerate(offsets):
            if off and off >= t_size:
                raise self.fail(f"{what}: field {slot} at {off} lies outside its table "
                                f"({t_size} bytes)")

        def at(slot: int, size: int) -> int | None:
            off = offsets[slot] if slot < slots else 0
            if not off:
                return None
            if off + size > t_size:
                raise self.fail(f"{what}: field {slot} ({size} bytes at {off}) overruns "
                                f"its table ({t_size} bytes)")
            return pos + off

        for slot, size in spec.scalars.items():
            at(slot, size)
        for slot in spec.strings:
            p = at(slot, 4)
            if p is not None:
                self.vector(p, 1, f"{what} string field {slot}")
        for slot, elem in spec.vectors.items():
            p = at(slot, 4)
            if p is not None:
                self.vector(p, elem, f"{what} field {slot}")
        for slot, sub in spec.tables.items():
            p = at(slot, 4)
            if p is not None:
                self.table(self.ref(p, f"{what} {sub.name}"), sub, f"{what} {sub.name}")
        for slot, sub in spec.table_vectors.items():
            p = at(slot, 4)
            if p is not None:
                first, n = self.vector(p, 4, f"{what} {sub.name} list")
                for i in range(n):
                    e = first + 4 * i
                    self.table(self.ref(e, f"{sub.name} {i}"), sub, f"{sub.name} {i}")
        for slot in spec.unions:
            p = at(slot, 4)
            if p is not None:
                tpos = self.ref(p, f"{what} options")
                tp = at(slot - 1, 1)  # the union's type field precedes it
                kind = self.data[tp] if tp is not None else 0
                opts = _Table("SqueezeOptions", vectors={0: 4}) if kind == _SQUEEZE_OPTIONS \
                    else _Table("options")
                self.table(tpos, opts, f"{what} options")


def check_flatbuffer(data: bytes, source: str) -> None:
    """Every table, vector and string nnopt reads lies inside ``data``; every buffer and
    operator-code index a tensor or op names exists. Raises :class:`ModelError`."""
    r = _Reader(data, source)
    r.table(r.ref(0, "root table"), _MODEL, "Model")
    # the structure is sound: the tflite reader can follow it now
    model = tflite.Model.GetRootAsModel(data, 0)
    n_buffers, n_codes = model.BuffersLength(), model.OperatorCodesLength()
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        n_tensors = sg.TensorsLength()
        for i in range(n_tensors):
            b = sg.Tensors(i).Buffer()
            if b and b >= n_buffers:
                raise r.fail(f"tensor {i} names buffer {b}; the model has {n_buffers}")
        for k in range(sg.OperatorsLength()):
            code = sg.Operators(k).OpcodeIndex()
            if code >= n_codes:
                raise r.fail(f"op {k} names operator code {code}; the model has {n_codes}")
        for kind, count, get in (("input", sg.InputsLength(), sg.Inputs),
                                 ("output", sg.OutputsLength(), sg.Outputs)):
            for j in range(count):
                t = get(j)
                if not 0 <= t < n_tensors:
                    raise r.fail(f"graph {kind} {j} is tensor {t}; the model has {n_tensors}")
    for j in range(n_buffers):
        buf = model.Buffers(j)
        if buf.DataLength() == 0 and buf.Offset() > 1:
            start, size = int(buf.Offset()), int(buf.Size())
            if start + size > len(data):
                raise r.fail(f"buffer {j} ({size} bytes at {start}) lies beyond the end of "
                             f"the file ({len(data)} bytes)")


# ----- quantisation -----

_INT_RANGE: Final = {DType.INT8: (-128, 127), DType.UINT8: (0, 255),
                     DType.INT16: (-32768, 32767), DType.INT32: (-(2**31), 2**31 - 1),
                     DType.INT64: (-(2**63), 2**63 - 1)}
_NON_INT_ZP: Final = (-(2**31), 2**31 - 1)  # a float or bool tensor's zero point: an int32
_MAX_REAL: Final = float(2**31)  # a multiplier at or above 2**31 needs a shift past 31


def _describe(t: Tensor) -> str:
    return f"tensor {t.index} ({t.name}, {t.dtype.name}, shape {list(t.shape)})"


def _check_tensor(t: Tensor, source: str) -> None:
    q = t.quant
    if q is None:
        return
    what = f"{source}: {_describe(t)}"
    for s in q.scale:
        if not (math.isfinite(s) and s > 0 and np.isfinite(np.float32(s)) and np.float32(s) > 0):
            raise ModelError(f"{what} has quantisation scale {s!r}; scales must be finite and "
                             "positive (as float32)", hint=_QHINT)
    lo, hi = _INT_RANGE.get(t.dtype, _NON_INT_ZP)
    for z in q.zero_point:
        if not lo <= z <= hi:
            raise ModelError(f"{what} has zero point {z}, outside [{lo}, {hi}]", hint=_QHINT)
    n = len(q.scale)
    if len(q.zero_point) not in (1, n):
        raise ModelError(f"{what} has {n} scales but {len(q.zero_point)} zero points",
                         hint=_QHINT)
    if n == 1:
        return  # per tensor: TFLM ignores the axis
    rank = len(t.shape)
    # TFLM's own person_detect.tflite has rank-1 biases carrying the filter's axis 3 (an old
    # converter's habit, accepted by TFLM, which never reads a bias's axis): an axis past the
    # rank is read as the last one; a negative one is corrupt.
    axis = min(q.axis, rank - 1)
    if rank == 0 or axis < 0:
        raise ModelError(f"{what} has {n} per-channel scales along axis {q.axis}; it has "
                         f"{rank} axes", hint=_QHINT)
    if t.shape[axis] != n:
        raise ModelError(f"{what} has {n} per-channel scales along axis {q.axis}, whose "
                         f"dimension is {t.shape[axis]}", hint=_QHINT)


def _scale_extremes(g: Graph, ts: tuple[int, ...]) -> list[float]:
    """The smallest and largest scale (as float32, as the kernels see them) of each
    quantised tensor in ``ts``."""
    out: list[float] = []
    for t in ts:
        q = g.tensors[t].quant if t >= 0 else None
        if q is not None:
            out += [float(np.float32(s)) for s in (min(q.scale), max(q.scale))]
    return out


def _check_op_multipliers(g: Graph, source: str) -> None:
    """Every rescale a kernel can derive from an op's scales (in / out, in × weight / out,
    in × in / out) is a finite real below 2**31: TFLM's QuantizeMultiplier encodes it as a
    Q31 multiplier with a shift of at most 31. Bounded from above with the largest input
    and the smallest output scale, whatever the operator."""
    for op in g.ops:
        ins, outs = _scale_extremes(g, op.inputs), _scale_extremes(g, op.outputs)
        if not ins or not outs:
            continue
        lo_out = min(outs)
        big_in = max(ins)
        for real in (big_in / lo_out, big_in * big_in / lo_out):
            if not math.isfinite(real) or real >= _MAX_REAL:
                raise ModelError(
                    f"{source}: op {op.index} ({op.opcode}) rescales by {real:g} (input scale "
                    f"{big_in:g}, output scale {lo_out:g}); a fixed-point multiplier must be "
                    f"below 2**31", hint=_QHINT)


def check_quantization(g: Graph, source: str) -> None:
    """Zero points inside their dtype's range, scales finite and positive, per-channel counts
    matching the quantised axis, and every op's rescale representable. Raises ModelError."""
    for t in g.tensors:
        _check_tensor(t, source)
    _check_op_multipliers(g, source)
