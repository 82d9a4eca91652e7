"""Comparisons and LOGICAL_AND/OR -> ``nnrt/kernels/compare.h``.

Supported (bit-exact with TFLM's ``comparisons.cc`` and ``logical.cc``), all with numpy
broadcasting and a bool output:

- EQUAL, NOT_EQUAL: bool, int8, int32, int64, float32; GREATER, GREATER_EQUAL, LESS,
  LESS_EQUAL: int8, int32, int64, float32. uint8 and int16 are refused: the installed
  tflite-micro interpreter fails to invoke them (its kernels take no such inputs).
- int8 rescales both inputs as TFLM's ComparisonsPrepare sets up: left shift 8, each
  input's scale as ``QuantizeMultiplierSmallerThanOneExp`` (double), offsets -zp.
- LOGICAL_AND, LOGICAL_OR: bool.
- SELECT_V2 (``select.cc``): int8, int16, float32 values chosen by a bool condition,
  three-way broadcasting, copied raw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..cdefs import DTYPE_SIZE, KERNEL_SUFFIX, MAX_DIMS, DType
from ..ir import Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import Body, Done, Raw
from .common import C_TYPE, c_call, c_params, cast, padded, per_tensor_quant, refuse, tensor_desc
from .elementwise import Broadcast, broadcast_descriptor

_EQUALITY = ("EQUAL", "NOT_EQUAL")
_ORDERED = ("GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
_LOGICAL = ("LOGICAL_AND", "LOGICAL_OR")
_ACCEPTS: Mapping[str, tuple[DType, ...]] = {
    **{c: (DType.BOOL, DType.INT8, DType.INT32, DType.INT64, DType.FLOAT32) for c in _EQUALITY},
    **{c: (DType.INT8, DType.INT32, DType.INT64, DType.FLOAT32) for c in _ORDERED},
    **{c: (DType.BOOL,) for c in _LOGICAL},
}
_LEFT_SHIFT = 8  # TFLM's kLeftShift


def _names(dtypes: Sequence[DType]) -> tuple[str, ...]:
    return tuple(d.name.lower() for d in dtypes)


def smaller_than_one(op: Op, scale: float) -> tuple[int, int]:
    """TFLM's QuantizeMultiplierSmallerThanOneExp (the shift must not be positive)."""
    m, shift = quantize_multiplier(scale)
    if shift > 0 or shift < -31:
        raise refuse(op, f"input scale {scale!r} is not below 1 (or below 2^-32)",
                     "int8 comparisons of inputs with scales in [2^-32, 1)")
    return m, shift


class CompareLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/compare.h",)
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {c: _names(d) for c, d in _ACCEPTS.items()}

    def _operands(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, Broadcast]:
        supported = (f"{' or '.join(self.dtypes_by_opcode[op.opcode])} inputs of one dtype, "
                     "a bool output, numpy broadcasting")
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects 2 inputs and 1 output", supported)
        a, b = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if a.dtype not in _ACCEPTS[op.opcode] or b.dtype != a.dtype or y.dtype != DType.BOOL:
            raise refuse(op, f"{tensor_desc(a)}, {tensor_desc(b)} -> {tensor_desc(y)}",
                         supported)
        bc = broadcast_descriptor(a.shape, b.shape, y.shape)
        if bc is None:
            raise refuse(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast "
                         f"to the output shape {list(y.shape)}", "numpy broadcasting")
        if len(bc.dims) > MAX_DIMS:
            raise refuse(op, f"broadcast needs {len(bc.dims)} dimensions after merging",
                         f"at most {MAX_DIMS}")
        return a, b, y, bc

    def _params_s8(self, op: Op, a: Tensor, b: Tensor) -> dict[str, Any]:
        s1, z1 = per_tensor_quant(op, a)
        s2, z2 = per_tensor_quant(op, b)
        m1, sh1 = smaller_than_one(op, s1)
        m2, sh2 = smaller_than_one(op, s2)
        return {"left_shift": _LEFT_SHIFT, "input1_offset": -z1, "input1_multiplier": m1,
                "input1_shift": sh1, "input2_offset": -z2, "input2_multiplier": m2,
                "input2_shift": sh2}

    def check(self, graph: Graph, op: Op) -> None:
        a, b, _, _ = self._operands(graph, op)
        if a.dtype == DType.INT8:
            self._params_s8(op, a, b)

    def emit(self, ctx: EmitContext) -> Body:
        a, b, y, bc = self._operands(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done()]
        ctype = C_TYPE[a.dtype]
        args = [cast(ctx, a.index, ctype, True), cast(ctx, b.index, ctype, True),
                cast(ctx, y.index, "bool", False)]
        code = ctx.op.opcode
        if code in _LOGICAL:
            return [*c_params("nnrt_broadcast_t", bc.c(), "bcast"),
                    *c_call(f"nnrt_{code.lower()}_b", ["&bcast", *args])]
        fields: dict[str, Any] = {"bcast": bc.c(), "op": Raw(f"NNRT_CMP_{code}")}
        if a.dtype == DType.INT8:
            fields.update(self._params_s8(ctx.op, a, b))
            ptype = "nnrt_compare_s8_params_t"
        else:
            ptype = "nnrt_compare_params_t"
        return [*c_params(ptype, fields),
                *c_call(f"nnrt_compare_{KERNEL_SUFFIX[a.dtype]}", ["&params", *args])]


Walk = tuple[list[int], list[list[int]]]


def select_walk(shapes: Sequence[Sequence[int]], out_shape: Sequence[int]) -> Walk | None:
    """The output's dims and each input's element strides (0 where it is
    broadcast), extent-1 dims dropped and mergeable neighbours merged; None if the
    shapes do not broadcast to out_shape."""
    rank = max(len(out_shape), *(len(s) for s in shapes))
    so = [1] * (rank - len(out_shape)) + list(out_shape)
    full = [[1] * (rank - len(s)) + list(s) for s in shapes]
    for d in range(rank):
        if any(f[d] not in (1, so[d]) for f in full) or max(f[d] for f in full) != so[d]:
            return None
    strides = []
    for f in full:
        st = [1] * rank
        for d in range(rank - 2, -1, -1):
            st[d] = st[d + 1] * f[d + 1]
        strides.append([0 if f[d] == 1 else st[d] for d in range(rank)])
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in shapes]
    for d in range(rank):
        if so[d] == 1:
            continue
        if dims and all(o[-1] == s[d] * so[d] for o, s in zip(out, strides, strict=True)):
            dims[-1] *= so[d]
            for o, s in zip(out, strides, strict=True):
                o[-1] = s[d]
            continue
        dims.append(so[d])
        for o, s in zip(out, strides, strict=True):
            o.append(s[d])
    if not dims:
        return [1], [[0] for _ in shapes]
    return dims, out


class SelectLowering(LoweringBase):
    """SELECT_V2 (TFLM's select.cc): a bool condition, x and y of int8, int16 or float32
    (the same), broadcast to the output; values copied raw, as TFLM."""

    headers: Sequence[str] = ("nnrt/kernels/compare.h",)
    dtypes: Sequence[str] = ("int8", "int16", "float32")

    def _layout(self, graph: Graph, op: Op) -> tuple[list[Tensor], Tensor, dict[str, Any]]:
        supported = ("a bool condition and int8, int16 or float32 x, y and output of one "
                     "dtype, numpy broadcasting")
        if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects a condition, x, y and 1 output", supported)
        c, x, y = (graph.tensors[t] for t in op.inputs)
        out = graph.tensors[op.outputs[0]]
        if c.dtype != DType.BOOL or x.dtype not in (DType.INT8, DType.INT16, DType.FLOAT32) \
                or y.dtype != x.dtype or out.dtype != x.dtype:
            raise refuse(op, f"{tensor_desc(c)}, {tensor_desc(x)}, {tensor_desc(y)} -> "
                         f"{tensor_desc(out)}", supported)
        walk = select_walk([c.shape, x.shape, y.shape], out.shape)
        if walk is None or len(walk[0]) > MAX_DIMS:
            raise refuse(op, f"shapes {list(c.shape)}, {list(x.shape)}, {list(y.shape)} do "
                         f"not broadcast to {list(out.shape)}", supported)
        dims, (sc, sx, sy) = walk
        return [c, x, y], out, {"rank": len(dims), "dims": padded(dims),
                                "stride_c": padded(sc), "stride_x": padded(sx),
                                "stride_y": padded(sy), "elem_bytes": DTYPE_SIZE[x.dtype]}

    def check(self, graph: Graph, op: Op) -> None:
        self._layout(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        (c, x, y), out, fields = self._layout(ctx.graph, ctx.op)
        if out.num_elements == 0:
            return [Done()]
        return [*c_params("nnrt_select_params_t", fields),
                *c_call("nnrt_select_x8", ["&params", cast(ctx, c.index, "bool", True),
                                           ctx.ptr(x.index), ctx.ptr(y.index),
                                           ctx.ptr(out.index)])]


COMPARE = CompareLowering()
SELECT = SelectLowering()
