"""SPLIT, SPLIT_V, UNPACK -> ``nnrt_split_x8``; PACK -> ``nnrt_concat_x8``; GATHER ->
``nnrt_gather_x8``
(``nnrt/kernels/shape.h``; type-agnostic: values are moved, never requantised, as
TFLM's reference kernels do).

Supported as TFLM: int8, int16, int32 and float32 (PACK also int64), any rank and axis
(negative allowed), a constant axis operand (SPLIT, SPLIT_V) and constant int32 size
splits (SPLIT_V, -1 for the inferred one). All outputs (inputs for PACK) have the
dtype of the input (output); TFLM requires nothing of the quantisation, and nnopt
checks nothing more. An output the planner placed as a view of the input
(:func:`nnopt.ops.structure.split_views`) is not copied: the kernel sees it already in
place.

GATHER as TFLM's ``gather.cc``: int8 or float32 values, int32 coordinates (constant or
computed), any axis and batch_dims; a coordinate out of range fails the invocation
(NNRT_ERR_ARG), as TFLM's does. EMBEDDING_LOOKUP (``embedding_lookup.cc``, int32 ids
[n] into a [rows, ...] int8 or float32 table, the output of the table's dtype) is the
same gather of rows; TFLM's hybrid form (int8 table, float32 output dequantised) is
refused. GATHER_ND (``gather_nd.cc``): int8 or float32 values, int32 index tuples
of up to 5 entries; an index out of its dimension fails the invocation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..cdefs import DTYPE_SIZE, DType
from ..ir import GatherOptions, Graph, Op, PackOptions, SplitOptions, Tensor
from .base import EmitContext, LoweringBase
from .call import Body, Done, KernelCheck, PtrList, Raw
from .common import c_call, c_params, cast, padded, refuse, tensor_desc
from .shape import CONCAT_CHECK

_DTYPES = (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)
_SUPPORTED = ("int8, int16, int32 or float32 tensors of one dtype, a constant axis, "
              "outputs that tile the input along the axis (constant int32 size_splits "
              "for SPLIT_V)")



def split_data_input(op: Op) -> int:
    """Position of the data operand among the op's inputs (SPLIT takes the axis first)."""
    return 1 if op.opcode == "SPLIT" else 0


def split_layout(graph: Graph, op: Op) -> tuple[int, int, list[int]] | None:
    """(outer, inner bytes, per-output extent along the axis) of a split-like op: the
    input is ``outer`` rows of ``sum(extents) * inner`` bytes and output i takes
    ``extents[i] * inner`` bytes of every row. None where the shapes do not fit."""
    pos = split_data_input(op)
    if len(op.inputs) <= pos or op.inputs[pos] < 0 or not op.outputs:
        return None
    x = graph.tensors[op.inputs[pos]]
    ys = [graph.tensors[t] for t in op.outputs]
    rank = len(x.shape)
    if op.opcode == "UNPACK":
        o = op.options
        if not isinstance(o, PackOptions):
            return None
        axis = o.axis + rank if o.axis < 0 else o.axis
        if not 0 <= axis < rank or x.shape[axis] != len(ys):
            return None
        rest = x.shape[:axis] + x.shape[axis + 1:]
        if any(y.shape != rest for y in ys):
            return None
        extents = [1] * len(ys)
    else:
        found = _split_axis(graph, op, rank)
        if found is None:
            return None
        axis = found
        extents = []
        for y in ys:
            if len(y.shape) != rank or any(y.shape[d] != x.shape[d]
                                           for d in range(rank) if d != axis):
                return None
            extents.append(y.shape[axis])
        if sum(extents) != x.shape[axis]:
            return None
    if any(y.dtype != x.dtype for y in ys):
        return None
    return (math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:]) * DTYPE_SIZE[x.dtype],
            extents)


def _split_axis(graph: Graph, op: Op, rank: int) -> int | None:
    pos = 0 if op.opcode == "SPLIT" else 2
    if len(op.inputs) <= pos or op.inputs[pos] < 0:
        return None
    t = graph.tensors[op.inputs[pos]]
    if not t.is_constant or t.num_elements != 1:
        return None
    axis = int(t.array().reshape(-1)[0])
    axis = axis + rank if axis < 0 else axis
    return axis if 0 <= axis < rank else None


class SplitLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = ("int8", "int16", "int32", "float32")

    def _layout(self, graph: Graph, op: Op) -> tuple[Tensor, int, list[int]]:
        pos = split_data_input(op)
        want = 2 if op.opcode == "SPLIT" else (3 if op.opcode == "SPLIT_V" else 1)
        if len(op.inputs) != want or min(op.inputs) < 0 or not op.outputs:
            raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                         f"{want} inputs and at least 1 output")
        x = graph.tensors[op.inputs[pos]]
        for t in op.outputs:
            y = graph.tensors[t]
            if x.dtype not in _DTYPES or y.dtype != x.dtype:
                raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", _SUPPORTED)
        o = op.options
        if op.opcode == "UNPACK":
            if not isinstance(o, PackOptions) or o.count != len(op.outputs):
                raise refuse(op, f"num {getattr(o, 'count', None)} differs from its "
                             f"{len(op.outputs)} outputs", _SUPPORTED)
        else:
            axis_t = graph.tensors[op.inputs[0 if op.opcode == "SPLIT" else 2]]
            if not axis_t.is_constant or axis_t.dtype != DType.INT32 \
                    or axis_t.num_elements != 1:
                raise refuse(op, f"axis {tensor_desc(axis_t)} is not a constant int32 "
                             "scalar", _SUPPORTED)
            if isinstance(o, SplitOptions) and o.num_splits not in (0, len(op.outputs)):
                raise refuse(op, f"num_splits {o.num_splits} differs from its "
                             f"{len(op.outputs)} outputs", _SUPPORTED)
            if op.opcode == "SPLIT_V":
                self._check_sizes(graph, op, x)
        layout = split_layout(graph, op)
        if layout is None:
            raise refuse(op, f"outputs {[list(graph.tensors[t].shape) for t in op.outputs]} "
                         f"do not tile the input {list(x.shape)} along the axis", _SUPPORTED)
        outer, inner, extents = layout
        if op.opcode == "SPLIT" and len(set(extents)) > 1:
            raise refuse(op, f"unequal outputs {extents} along the axis", "equal splits")
        return x, outer, [e * inner for e in extents]

    @staticmethod
    def _check_sizes(graph: Graph, op: Op, x: Tensor) -> None:
        sizes_t = graph.tensors[op.inputs[1]]
        if not sizes_t.is_constant or sizes_t.dtype != DType.INT32:
            raise refuse(op, f"size_splits {tensor_desc(sizes_t)} is not a constant int32 "
                         "vector", _SUPPORTED)
        if sizes_t.num_elements != len(op.outputs):
            raise refuse(op, f"{sizes_t.num_elements} size_splits for "
                         f"{len(op.outputs)} outputs", _SUPPORTED)

    def check(self, graph: Graph, op: Op) -> None:
        self._layout(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, outer, blocks = self._layout(ctx.graph, ctx.op)
        if x.num_elements == 0:
            return [Done("empty input")]
        ident = ctx.const_array("blocks", np.asarray(blocks, dtype=np.int32))
        outs = ctx.op.outputs
        lines = c_params("nnrt_split_params_t", {
            "outer": outer, "num_outputs": len(outs), "block_bytes": Raw(ident)})
        lines.append(PtrList("outputs", tuple(ctx.ptr(t) for t in outs), const=False))
        return [*lines, *c_call("nnrt_split_x8", ["&params", ctx.ptr(x.index), "outputs"])]


class PackLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    checks: Sequence[KernelCheck] = (CONCAT_CHECK,)
    dtypes: Sequence[str] = ("int8", "int16", "int32", "int64", "float32")

    def _blocks(self, graph: Graph, op: Op) -> tuple[list[Tensor], Tensor, int, int]:
        if not op.inputs or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "needs inputs and 1 output", "PACK")
        ins = [graph.tensors[t] for t in op.inputs]
        y = graph.tensors[op.outputs[0]]
        o = op.options
        if not isinstance(o, PackOptions) or o.count != len(ins):
            raise refuse(op, f"values_count {getattr(o, 'count', None)} differs from its "
                         f"{len(ins)} inputs", "values_count = number of inputs")
        rank = len(y.shape)
        axis = o.axis + rank if o.axis < 0 else o.axis
        if not 0 <= axis < rank or y.shape[axis] != len(ins):
            raise refuse(op, f"axis {o.axis} of output {tensor_desc(y)} does not hold "
                         f"{len(ins)} inputs", "axes in [-rank, rank) of the output")
        rest = y.shape[:axis] + y.shape[axis + 1:]
        for x in ins:
            if x.dtype not in (*_DTYPES, DType.INT64) or x.dtype != y.dtype:
                raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}",
                             "int8, int16, int32, int64 or float32 of one dtype")
            if x.shape != rest:
                raise refuse(op, f"{tensor_desc(x)} does not stack into "
                             f"{list(y.shape)} along axis {axis}", "equal input shapes")
        inner = math.prod(y.shape[axis + 1:]) * DTYPE_SIZE[y.dtype]
        return ins, y, math.prod(y.shape[:axis]), inner

    def check(self, graph: Graph, op: Op) -> None:
        self._blocks(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        ins, y, outer, inner = self._blocks(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done("empty output")]
        ident = ctx.const_array("blocks", np.full(len(ins), inner, dtype=np.int32))
        lines = c_params("nnrt_concat_params_t", {
            "outer": outer, "num_inputs": len(ins), "block_bytes": Raw(ident)})
        lines.append(PtrList("inputs", tuple(ctx.ptr(x.index) for x in ins)))
        return [*lines, *c_call("nnrt_concat_x8", ["&params", "inputs", ctx.ptr(y.index)])]


class GatherLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = ("int8", "float32")  # values; int32 indices

    def _fields(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, dict[str, int]]:
        if op.opcode == "EMBEDDING_LOOKUP":
            return self._lookup(graph, op)
        sup = ("int8 or float32 values, int32 coordinates, 0 <= batch_dims <= axis < rank, "
               "equal leading batch dims")
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                         "2 inputs and 1 output")
        x, c = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if x.dtype not in (DType.INT8, DType.FLOAT32) or y.dtype != x.dtype \
                or c.dtype != DType.INT32:
            raise refuse(op, f"{tensor_desc(x)} at {tensor_desc(c)} -> {tensor_desc(y)}", sup)
        o = op.options if isinstance(op.options, GatherOptions) else GatherOptions()
        rank, crank = len(x.shape), len(c.shape)
        axis = o.axis + rank if o.axis < 0 else o.axis
        bd = o.batch_dims + crank if o.batch_dims < 0 else o.batch_dims
        if not (0 <= bd <= axis < rank and bd <= crank) or x.shape[:bd] != c.shape[:bd]:
            raise refuse(op, f"axis {o.axis}, batch_dims {o.batch_dims} for "
                         f"{tensor_desc(x)} and {tensor_desc(c)}", sup)
        want = x.shape[:axis] + c.shape[bd:] + x.shape[axis + 1:]
        if y.shape != want:
            raise refuse(op, f"output {tensor_desc(y)} is not {list(want)}", sup)
        if x.shape[axis] < 1:
            raise refuse(op, f"{tensor_desc(x)} has an empty axis", sup)
        return x, c, y, {
            "batch": math.prod(x.shape[:bd]), "outer": math.prod(x.shape[bd:axis]),
            "axis_size": x.shape[axis], "coord_size": math.prod(c.shape[bd:]),
            "inner_bytes": math.prod(x.shape[axis + 1:]) * DTYPE_SIZE[x.dtype]}

    @staticmethod
    def _lookup(graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, dict[str, int]]:
        sup = ("int32 ids [n] into a [rows, ...] int8 or float32 table, output of the "
               "table's dtype (the hybrid int8 -> float32 form is not supported)")
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                         "2 inputs and 1 output")
        ids, x = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if ids.dtype != DType.INT32 or len(ids.shape) != 1 or len(x.shape) < 2 \
                or x.dtype not in (DType.INT8, DType.FLOAT32) or y.dtype != x.dtype \
                or y.shape != ids.shape + x.shape[1:] or x.shape[0] < 1:
            raise refuse(op, f"{tensor_desc(ids)} into {tensor_desc(x)} -> "
                         f"{tensor_desc(y)}", sup)
        return x, ids, y, {"batch": 1, "outer": 1, "axis_size": x.shape[0],
                           "coord_size": ids.shape[0],
                           "inner_bytes": math.prod(x.shape[1:]) * DTYPE_SIZE[x.dtype]}

    def check(self, graph: Graph, op: Op) -> None:
        _, c, _, f = self._fields(graph, op)
        if c.is_constant and any(not 0 <= int(v) < f["axis_size"]
                                 for v in c.array().reshape(-1)):
            raise refuse(op, f"constant coordinates {tensor_desc(c)} outside [0, "
                         f"{f['axis_size']})", "coordinates inside the axis")

    def emit(self, ctx: EmitContext) -> Body:
        x, c, y, fields = self._fields(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done("empty output")]
        return [*c_params("nnrt_gather_params_t", fields),
                *c_call("nnrt_gather_x8", ["&params", ctx.ptr(x.index),
                                           cast(ctx, c.index, "int32_t", True),
                                           ctx.ptr(y.index)])]


class GatherNdLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = ("int8", "float32")  # values; int32 indices

    def _fields(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, dict[str, Any]]:
        sup = "int8 or float32 values, int32 index tuples of 1 to 5 entries (TFLM)"
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs",
                         "2 inputs and 1 output")
        x, idx = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if x.dtype not in (DType.INT8, DType.FLOAT32) or y.dtype != x.dtype \
                or idx.dtype != DType.INT32 or not x.shape or not idx.shape:
            raise refuse(op, f"{tensor_desc(x)} at {tensor_desc(idx)} -> "
                         f"{tensor_desc(y)}", sup)
        nd = idx.shape[-1]
        if not 1 <= nd <= min(5, len(x.shape)):
            raise refuse(op, f"index tuples of {nd} entries for {tensor_desc(x)}", sup)
        want = idx.shape[:-1] + x.shape[nd:]
        if y.shape != want:
            raise refuse(op, f"output {tensor_desc(y)} is not {list(want)}", sup)
        elem = DTYPE_SIZE[x.dtype]
        strides = [math.prod(x.shape[d + 1:]) * elem for d in range(nd)]
        return x, idx, y, {"n_slices": math.prod(idx.shape[:-1]), "nd": nd,
                           "dims": padded(list(x.shape[:nd])), "strides": padded(strides),
                           "slice_bytes": math.prod(x.shape[nd:]) * elem}

    def check(self, graph: Graph, op: Op) -> None:
        x, idx, _, f = self._fields(graph, op)
        if idx.is_constant:
            arr = idx.array().reshape(-1, f["nd"])
            if (arr < 0).any() or (arr >= np.asarray(x.shape[:f["nd"]])).any():
                raise refuse(op, f"constant indices {tensor_desc(idx)} outside the input "
                             f"{list(x.shape)}", "indices inside the input")

    def emit(self, ctx: EmitContext) -> Body:
        x, idx, y, fields = self._fields(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done("empty output")]
        return [*c_params("nnrt_gather_nd_params_t", fields),
                *c_call("nnrt_gather_nd_x8", ["&params", ctx.ptr(x.index),
                                              cast(ctx, idx.index, "int32_t", True),
                                              ctx.ptr(y.index)])]


SPLIT = SplitLowering()
GATHER_ND = GatherNdLowering()
GATHER = GatherLowering()
PACK = PackLowering()
