"""Data-movement operators -> nnrt/kernels/shape.h (type-agnostic ``_x8`` kernels).

- CONCATENATION along any axis (negative axes allowed): int8 inputs must share the
  output's scale and zero point and the fused activation must be NONE (TFLM's Prepare
  refuses anything else);
- PAD / PADV2 with constant int32 paddings, up to 5-D as TFLM; the pad value is the
  output zero point for int8 PAD, 0.0f for float PAD, the constant for PADV2;
- TRANSPOSE with a constant permutation, up to 5-D as TFLM;
- SLICE (int32/int64 begin and size, size -1 = to the end), up to 5-D as TFLM;
- STRIDED_SLICE with begin/end/shrink-axis masks and negative strides, up to 4-D as
  TFLM (which ignores ellipsis/new-axis masks and ``offset``: refused here);
- RESHAPE / SQUEEZE / EXPAND_DIMS: a byte copy for when the planner did not alias the
  output onto the input (it normally does: no code then);
- BROADCAST_ARGS (int32 or int64 1-D shape vectors, as TFLM): folded here to a constant
  copied out when both shapes are constants, ``nnrt_broadcast_args`` when either is
  computed at run time.

TRANSPOSE, SLICE and STRIDED_SLICE all become one strided view (start offset and one
byte stride per output dimension) copied densely by ``nnrt_strided_copy_x8``; begin/end
and mask resolution happens here, as TFLM's ``strided_slice_logic.h`` does it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..cdefs import C_TYPE, DTYPE_SIZE, MAX_DIMS, DType
from ..ir import NUMPY_DTYPE, ConcatOptions, Graph, Op, StridedSliceOptions, Tensor
from .base import EmitContext, LoweringBase
from .call import Arg, Body, Done, KernelCheck, Params, PtrList, Raw
from .common import c_call, c_params, merge_dims, padded, per_tensor_quant, refuse, tensor_desc

_MOVE_DTYPES = (DType.INT8, DType.FLOAT32, DType.INT16, DType.INT32)
_MOVE_NAMES = "int8, int16, int32 or float32 (input and output alike)"
_MOVE_LIST = tuple(d.name.lower() for d in _MOVE_DTYPES)
# TFLM's slice.cc and strided_slice.cc also take bool; concatenation.cc int64 and bool
_SLICE_DTYPES = (*_MOVE_DTYPES, DType.BOOL)
_CONCAT_DTYPES = (*_MOVE_DTYPES, DType.INT64, DType.BOOL)


def _strides(shape: Sequence[int]) -> list[int]:
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


def _same_dtype(op: Op, x: Tensor, y: Tensor, allowed: Sequence[DType] = _MOVE_DTYPES) -> int:
    if x.dtype not in allowed or y.dtype != x.dtype:
        names = ", ".join(d.name.lower() for d in allowed)
        raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}",
                     f"{names} (input and output alike)")
    return DTYPE_SIZE[x.dtype]


def _const_ints(op: Op, t: Tensor, what: str,
                dtypes: Sequence[DType] = (DType.INT32,)) -> list[int]:
    if not t.is_constant or t.dtype not in dtypes:
        names = "/".join(d.name.lower() for d in dtypes)
        raise refuse(op, f"{what} {tensor_desc(t)} must be a constant {names} tensor",
                     f"constant {names} {what}")
    return [int(v) for v in t.array().reshape(-1)]


def _inputs(graph: Graph, op: Op, n: Sequence[int]) -> list[Tensor]:
    if len(op.inputs) not in n or len(op.outputs) != 1 or min(op.inputs) < 0:
        raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                     f"{' or '.join(map(str, n))} inputs and 1 output")
    return [graph.tensors[t] for t in op.inputs]


# ----- strided views (TRANSPOSE, SLICE, STRIDED_SLICE) -----

def _view_fields(dims: Sequence[int], strides: Sequence[int], offset: int,
                 elem: int) -> dict[str, Any] | None:
    """A nnrt_strided_copy_params_t (byte strides), extent-1 dims dropped and
    neighbours merged; None for an empty view."""
    if any(d == 0 for d in dims):
        return None
    md, ms = merge_dims(dims, [s * elem for s in strides])
    if not md:
        md, ms = [1], [elem]
    if len(md) > MAX_DIMS:
        raise ValueError("view rank")
    return {"rank": len(md), "elem_size": elem, "offset": offset * elem,
            "dims": padded(md), "strides": padded(ms)}


def _view_call(ctx: EmitContext, fields: dict[str, Any] | None, x: Tensor,
               y: Tensor) -> Body:
    if fields is None:
        return [Done("empty output")]
    return [*c_params("nnrt_strided_copy_params_t", fields),
            *c_call("nnrt_strided_copy_x8", ["&params", ctx.ptr(x.index), ctx.ptr(y.index)])]


# the argument checks of the data-movement kernels (nnrt/kernels/shape.h)
STRIDED_COPY_CHECK = KernelCheck(("nnrt_strided_copy_x8",), "nnrt_strided_copy_check",
                                 "nnrt/kernels/shape.h")
CONCAT_CHECK = KernelCheck(("nnrt_concat_x8",), "nnrt_concat_check", "nnrt/kernels/shape.h")


class _ViewLowering(LoweringBase):
    """Common part of the lowerings that copy a strided view of their input."""

    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    checks: Sequence[KernelCheck] = (STRIDED_COPY_CHECK,)

    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        raise NotImplementedError

    def check(self, graph: Graph, op: Op) -> None:
        self._view(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, fields = self._view(ctx.graph, ctx.op)
        return _view_call(ctx, fields, x, y)


class TransposeLowering(_ViewLowering):
    dtypes: Sequence[str] = ("int8", "int16", "float32")
    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, perm_t = _inputs(graph, op, (2,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, (DType.INT8, DType.FLOAT32, DType.INT16))
        rank = len(x.shape)
        if rank > 5:
            raise refuse(op, f"{tensor_desc(x)} has rank {rank}", "TRANSPOSE up to 5-D (TFLM)")
        perm = _const_ints(op, perm_t, "permutation")
        if sorted(perm) != list(range(rank)):
            raise refuse(op, f"permutation {perm} is not a permutation of {rank} axes",
                         "a permutation of the input axes")
        if y.shape != tuple(x.shape[p] for p in perm):
            raise refuse(op, f"output {tensor_desc(y)} does not match the permutation",
                         "output shape = input shape permuted")
        st = _strides(x.shape)
        return x, y, _view_fields([x.shape[p] for p in perm], [st[p] for p in perm], 0, elem)


class SliceLowering(_ViewLowering):
    dtypes: Sequence[str] = tuple(d.name.lower() for d in _SLICE_DTYPES)
    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, begin_t, size_t = _inputs(graph, op, (3,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, _SLICE_DTYPES)
        rank = len(x.shape)
        if rank > 5:
            raise refuse(op, f"{tensor_desc(x)} has rank {rank}", "SLICE up to 5-D (TFLM)")
        begin = _const_ints(op, begin_t, "begin", (DType.INT32, DType.INT64))
        size = _const_ints(op, size_t, "size", (DType.INT32, DType.INT64))
        if len(begin) != rank or len(size) != rank:
            raise refuse(op, f"begin {begin} / size {size} for rank {rank}",
                         "one begin and one size per input dimension")
        dims = []
        for d in range(rank):
            stop = x.shape[d] if size[d] == -1 else begin[d] + size[d]
            if not 0 <= begin[d] <= stop <= x.shape[d]:
                raise refuse(op, f"slice [{begin[d]}, {stop}) of axis {d} (extent "
                             f"{x.shape[d]}) is out of range", "slices inside the input")
            dims.append(stop - begin[d])
        if math.prod(dims) != y.num_elements:
            raise refuse(op, f"output {tensor_desc(y)} does not match the slice {dims}",
                         "output shape = slice extents")
        st = _strides(x.shape)
        offset = sum(b * s for b, s in zip(begin, st, strict=True))
        return x, y, _view_fields(dims, st, offset, elem)


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if hi < v else (lo if v < lo else v)


class StridedSliceLowering(_ViewLowering):
    dtypes: Sequence[str] = tuple(d.name.lower() for d in _SLICE_DTYPES)
    def _view(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        x, begin_t, end_t, strides_t = _inputs(graph, op, (4,))
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, _SLICE_DTYPES)
        o = op.options if isinstance(op.options, StridedSliceOptions) \
            else StridedSliceOptions()
        if o.ellipsis_mask or o.new_axis_mask or o.offset:
            raise refuse(op, f"ellipsis_mask={o.ellipsis_mask} new_axis_mask="
                         f"{o.new_axis_mask} offset={o.offset}", "STRIDED_SLICE without "
                         "ellipsis/new-axis masks and offset (TFLM ignores them)")
        rank = len(x.shape)
        if rank > 4:
            raise refuse(op, f"{tensor_desc(x)} has rank {rank}",
                         "STRIDED_SLICE up to 4-D (TFLM)")
        begin = _const_ints(op, begin_t, "begin")
        end = _const_ints(op, end_t, "end")
        strides = _const_ints(op, strides_t, "strides")
        if not len(begin) == len(end) == len(strides) == rank:
            raise refuse(op, f"begin/end/strides of lengths {len(begin)}/{len(end)}/"
                         f"{len(strides)} for rank {rank}", "one entry per input dimension")
        st = _strides(x.shape)
        dims, vstrides, kept, offset = [], [], [], 0
        for d in range(rank):
            size, s = x.shape[d], strides[d]
            if s == 0:
                raise refuse(op, f"stride 0 on axis {d}", "non-zero strides")
            # StridedSliceStartForAxis / StridedSliceEndForAxis (TFLM's eval logic).
            start = begin[d] + size if begin[d] < 0 else begin[d]
            start = _clamp(start, 0, size) if s > 0 else _clamp(start, -1, size - 1)
            if o.begin_mask & (1 << d):
                start = 0 if s > 0 else size - 1
            if o.shrink_axis_mask & (1 << d):
                stop = start if start >= size else start + 1
            else:
                stop = end[d] + size if end[d] < 0 else end[d]
                stop = _clamp(stop, 0, size) if s > 0 else _clamp(stop, -1, size - 1)
                if o.end_mask & (1 << d):
                    stop = size if s > 0 else -1
            n = max(0, -(-(stop - start) // s)) if s > 0 else max(0, -(-(start - stop) // -s))
            dims.append(n)
            vstrides.append(s * st[d])
            if n > 0:
                offset += start * st[d]
            if not o.shrink_axis_mask & (1 << d):
                kept.append(n)
        if tuple(kept) != y.shape and not (math.prod(kept) == y.num_elements == 0):
            raise refuse(op, f"output {tensor_desc(y)} does not match the slice extents "
                         f"{kept}", "output shape = strided slice extents")
        if math.prod(dims) == 0:
            return x, y, None
        return x, y, _view_fields(dims, vstrides, offset, elem)


def contiguous_slice(graph: Graph, op: Op) -> int | None:
    """Byte offset in the input of a SLICE / STRIDED_SLICE whose output is one
    contiguous run of the input's bytes (the strided view merges to unit stride), else
    None; UnsupportedError where the lowering refuses the op."""
    lowering = _REGISTRY_VIEWS.get(op.opcode)
    if lowering is None:
        return None
    _, _, fields = lowering._view(graph, op)
    if fields is None or fields["rank"] != 1 or fields["strides"][0] != fields["elem_size"]:
        return None
    return int(fields["offset"])


# ----- CONCATENATION -----

class ConcatLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    checks: Sequence[KernelCheck] = (CONCAT_CHECK,)
    dtypes: Sequence[str] = tuple(d.name.lower() for d in _CONCAT_DTYPES)

    def _blocks(self, graph: Graph, op: Op) -> tuple[list[Tensor], Tensor, int, list[int]]:
        if not op.inputs or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise refuse(op, "needs inputs and 1 output", "CONCATENATION")
        ins = [graph.tensors[t] for t in op.inputs]
        y = graph.tensors[op.outputs[0]]
        o = op.options
        if not isinstance(o, ConcatOptions):
            raise refuse(op, "has no concatenation options", "ConcatenationOptions")
        if o.activation != "NONE":
            raise refuse(op, f"fused activation {o.activation}",
                         "CONCATENATION without fused activation (as TFLM)")
        rank = len(y.shape)
        if rank > MAX_DIMS:
            raise refuse(op, f"{tensor_desc(y)} has rank {rank}", f"up to {MAX_DIMS}-D")
        axis = o.axis + rank if o.axis < 0 else o.axis
        if not 0 <= axis < rank:
            raise refuse(op, f"axis {o.axis} is out of range for rank {rank}",
                         "axes in [-rank, rank)")
        elem = DTYPE_SIZE[y.dtype]
        for x in ins:
            _same_dtype(op, x, y, _CONCAT_DTYPES)
            if len(x.shape) != rank or any(x.shape[d] != y.shape[d]
                                           for d in range(rank) if d != axis):
                raise refuse(op, f"{tensor_desc(x)} does not fit the output "
                             f"{list(y.shape)} along axis {axis}", "matching shapes")
        if sum(x.shape[axis] for x in ins) != y.shape[axis]:
            raise refuse(op, f"inputs add up to {sum(x.shape[axis] for x in ins)} along "
                         f"axis {axis}, the output has {y.shape[axis]}", "matching shapes")
        if y.dtype == DType.INT8:
            so, zo = per_tensor_quant(op, y)
            for x in ins:
                si, zi = per_tensor_quant(op, x)
                if si != so or zi != zo:
                    raise refuse(op, f"{tensor_desc(x)} has quantisation ({si:g}, {zi}), "
                                 f"the output ({so:g}, {zo})", "int8 CONCATENATION with "
                                 "equal input and output quantisation (as TFLM)")
        outer = math.prod(y.shape[:axis])
        inner = math.prod(y.shape[axis + 1:]) * elem
        return ins, y, outer, [x.shape[axis] * inner for x in ins]

    def check(self, graph: Graph, op: Op) -> None:
        self._blocks(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        ins, y, outer, blocks = self._blocks(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done("empty output")]
        ident = ctx.const_array("blocks", np.asarray(blocks, dtype=np.int32))
        lines = c_params("nnrt_concat_params_t", {
            "outer": outer, "num_inputs": len(ins), "block_bytes": Raw(ident)})
        lines.append(PtrList("inputs", tuple(ctx.ptr(x.index) for x in ins)))
        return [*lines, *c_call("nnrt_concat_x8", ["&params", "inputs", ctx.ptr(y.index)])]


# ----- PAD / PADV2 -----

class PadLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    checks: Sequence[KernelCheck] = (KernelCheck(("nnrt_pad_x8",), "nnrt_pad_check",
                                                       "nnrt/kernels/shape.h"),)
    dtypes: Sequence[str] = _MOVE_LIST

    def _layout(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, dict[str, Any] | None]:
        ts = _inputs(graph, op, (3,) if op.opcode == "PADV2" else (2, 3))
        x, pads_t = ts[0], ts[1]
        y = graph.tensors[op.outputs[0]]
        elem = _same_dtype(op, x, y, (DType.INT8, DType.FLOAT32, DType.INT16, DType.INT32))
        rank = len(x.shape)
        if rank > 5:
            raise refuse(op, f"{tensor_desc(x)} has rank {rank}", "PAD up to 5-D (TFLM)")
        pads = _const_ints(op, pads_t, "paddings")
        if len(pads) != 2 * rank:
            raise refuse(op, f"{len(pads)} padding values for rank {rank}",
                         "paddings of shape [rank, 2]")
        before, after = pads[0::2], pads[1::2]
        if min(pads, default=0) < 0:
            raise refuse(op, f"negative paddings {pads}", "non-negative paddings")
        if y.shape != tuple(b + d + a for b, d, a in zip(before, x.shape, after, strict=True)):
            raise refuse(op, f"output {tensor_desc(y)} does not match the paddings {pads}",
                         "output = input + paddings")
        if len(ts) == 3:
            v = ts[2]
            if v.dtype != x.dtype or v.num_elements != 1:
                raise refuse(op, f"constant value {tensor_desc(v)}",
                             "a one-element constant value of the input's dtype")
            if x.dtype == DType.INT8 and per_tensor_quant(op, v) != per_tensor_quant(op, y):
                raise refuse(op, f"constant value {tensor_desc(v)} is quantised "
                             "differently from the output", "equal quantisation (TFLM)")
        elif x.dtype == DType.INT8:
            per_tensor_quant(op, y)
        if x.num_elements == 0 or y.num_elements == 0:
            if y.num_elements == 0:
                return x, y, None
            raise refuse(op, f"{tensor_desc(x)} is empty", "non-empty inputs")
        # Merge: a dim without padding folds into its outer neighbour; extent-1 dims
        # without padding disappear.
        dims: list[int] = []
        bef: list[int] = []
        aft: list[int] = []
        for d in range(rank):
            n, b, a = x.shape[d], before[d], after[d]
            if n == 1 and b == 0 and a == 0:
                continue
            if dims and b == 0 and a == 0:
                dims[-1] *= n
                bef[-1] *= n
                aft[-1] *= n
                continue
            dims.append(n)
            bef.append(b)
            aft.append(a)
        if not dims:
            dims, bef, aft = [1], [0], [0]
        return x, y, {"rank": len(dims), "elem_size": elem, "input_dims": padded(dims),
                      "before": padded(bef), "after": padded(aft)}

    def check(self, graph: Graph, op: Op) -> None:
        self._layout(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y, fields = self._layout(ctx.graph, ctx.op)
        if fields is None:
            return [Done("empty output")]
        lines = c_params("nnrt_pad_params_t", fields)
        value: Arg | str
        if len(ctx.op.inputs) == 3:
            value = ctx.ptr(ctx.op.inputs[2])
        else:
            ctype = C_TYPE[x.dtype]
            zero: Any = 0
            if x.dtype == DType.INT8:
                zero = per_tensor_quant(ctx.op, y)[1]
            elif x.dtype == DType.FLOAT32:
                zero = 0.0
            lines.append(Params(ctype, zero, "pad_value"))
            value = "&pad_value"
        return [*lines, *c_call("nnrt_pad_x8", ["&params", ctx.ptr(x.index), value,
                                                 ctx.ptr(y.index)])]


# ----- RESHAPE / SQUEEZE / EXPAND_DIMS -----

class CopyLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = tuple(d.name.lower() for d in DType)

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
            raise refuse(op, "needs an input and 1 output", op.opcode)
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if x.dtype != y.dtype or x.nbytes != y.nbytes:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)} changes the dtype or "
                         "the number of elements", "same dtype and element count")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._tensors(ctx.graph, ctx.op)
        return c_call("nnrt_copy_x8", [ctx.ptr(x.index), ctx.ptr(y.index), f"{x.nbytes}u"])


# ----- BROADCAST_ARGS -----

_SHAPE_VECTORS = (DType.INT32, DType.INT64)


def broadcast_args(shape1: np.ndarray, shape2: np.ndarray, n: int | None = None
                   ) -> np.ndarray:
    """BROADCAST_ARGS as TFLM's ``reference_ops::BroadcastArgs``: the broadcast of two
    shape vectors, ``n`` entries (default: the longer's) aligned at the last, an absent
    entry counting as 1, compared and written as C ints (int64 entries wrap to 32 bits).
    Raises ValueError where two entries differ and neither is 1 (TFLM aborts)."""
    n = max(len(shape1), len(shape2)) if n is None else n

    def from_end(v: np.ndarray, i: int) -> int:
        return int(np.asarray(v[len(v) - 1 - i]).astype(np.int32)) if i < len(v) else 1

    out = np.empty(n, dtype=shape1.dtype)
    for i in range(n):
        a, b = from_end(shape1, i), from_end(shape2, i)
        if a != b and 1 not in (a, b):
            raise ValueError(f"entries {a} and {b} do not broadcast")
        out[n - 1 - i] = b if a == 1 else a
    return out


class BroadcastArgsLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = tuple(d.name.lower() for d in _SHAPE_VECTORS)

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "needs 2 inputs and 1 output", "BROADCAST_ARGS(shape1, shape2)")
        s1, s2 = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        for t in (s1, s2, y):
            if t.dtype not in _SHAPE_VECTORS or t.dtype != y.dtype or len(t.shape) != 1:
                raise refuse(op, tensor_desc(t), "1-D int32 or int64 shape vectors, all "
                             "three of one type (TFLM)")
        return s1, s2, y

    def _folded(self, graph: Graph, op: Op) -> np.ndarray | None:
        """The output when both shapes are constants (the op then emits no kernel)."""
        s1, s2, y = self._tensors(graph, op)
        if not (s1.is_constant and s2.is_constant):
            return None
        try:
            return broadcast_args(s1.array(), s2.array(), y.shape[0])
        except ValueError as err:
            raise refuse(op, f"shapes {s1.array().tolist()} and {s2.array().tolist()}: "
                         f"{err}", "shapes whose entries are equal or 1") from None

    def check(self, graph: Graph, op: Op) -> None:
        self._folded(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        s1, s2, y = self._tensors(ctx.graph, ctx.op)
        folded = self._folded(ctx.graph, ctx.op)
        if folded is not None:
            values = ctx.const_array("shape", folded.astype(NUMPY_DTYPE[y.dtype]).view(np.int8))
            return c_call("nnrt_copy_x8", [values, ctx.ptr(y.index), f"{y.nbytes}u"])
        return c_call("nnrt_broadcast_args", [
            ctx.ptr(s1.index), f"{s1.num_elements}u", ctx.ptr(s2.index),
            f"{s2.num_elements}u", ctx.ptr(y.index), f"{y.num_elements}u",
            f"{DTYPE_SIZE[y.dtype]}u"])


SLICE = SliceLowering()
STRIDED_SLICE = StridedSliceLowering()
# the slicing lowerings, also asked whether a slice is a view (contiguous_slice)
_REGISTRY_VIEWS: dict[str, _ViewLowering] = {"SLICE": SLICE, "STRIDED_SLICE": STRIDED_SLICE}
TRANSPOSE = TransposeLowering()
CONCAT = ConcatLowering()
PAD = PadLowering()
COPY = CopyLowering()
BROADCAST_ARGS = BroadcastArgsLowering()
