"""SPLIT, SPLIT_V, UNPACK (one input cut into several outputs along an axis), PACK
(several inputs stacked along a new axis), GATHER (blocks picked along an axis by
int32 coordinates; GATHER_ND by index tuples) and EMBEDDING_LOOKUP (rows picked by
int32 ids): options, traits,
and which outputs are a contiguous byte range of the input (:func:`split_views`,
planned as views: no copy).
The lowerings are in :mod:`nnopt.lowering.structure`."""

from __future__ import annotations

import math
from typing import Any

import tflite

from ..cdefs import DTYPE_SIZE
from ..ir import GatherOptions, Graph, Op, OpOptions, PackOptions, SplitOptions
from .base import OpDef, OutputViews, table


def _read_split(cls: Any) -> Any:
    def read(op: Any) -> OpOptions:
        o = table(cls, op)
        return SplitOptions(o.NumSplits() if o is not None else 0)
    return read


def _read_pack(op: Any) -> OpOptions:
    o = table(tflite.PackOptions, op)
    return PackOptions(o.ValuesCount(), o.Axis()) if o is not None else PackOptions()


def _read_unpack(op: Any) -> OpOptions:
    o = table(tflite.UnpackOptions, op)
    return PackOptions(o.Num(), o.Axis()) if o is not None else PackOptions()


def _read_gather(op: Any) -> OpOptions:
    o = table(tflite.GatherOptions, op)
    return GatherOptions(o.Axis(), o.BatchDims()) if o is not None else GatherOptions()


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


def split_views(graph: Graph, op: Op) -> OutputViews | None:
    """Where every row is the whole input (nothing before the axis but extent-1 dims),
    output i is bytes [offset_i, offset_i + size_i) of the input: a view."""
    layout = split_layout(graph, op)
    if layout is None:
        return None
    outer, inner, extents = layout
    if outer != 1:
        return None
    offsets, at = [], 0
    for e in extents:
        offsets.append(at)
        at += e * inner
    return OutputViews(op.inputs[split_data_input(op)], tuple(zip(op.outputs, offsets,
                                                                  strict=True)))


DEFINITIONS = (
    OpDef("SPLIT", "SPLIT", "structure", _read_split(tflite.SplitOptions),
          output_views=split_views, blob=False),
    OpDef("SPLIT_V", "SPLIT_V", "structure", _read_split(tflite.SplitVOptions),
          output_views=split_views, blob=False),
    OpDef("UNPACK", "UNPACK", "structure", _read_unpack, output_views=split_views,
          blob=False),
    OpDef("PACK", "PACK", "structure", _read_pack, blob=False),
    OpDef("GATHER", "GATHER", "structure", _read_gather, blob=False),
    OpDef("EMBEDDING_LOOKUP", "EMBED", "structure", blob=False),
    OpDef("GATHER_ND", "GATHER_ND", "structure", blob=False),
)
