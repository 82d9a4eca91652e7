"""SPLIT, SPLIT_V, UNPACK (one input cut into several outputs along an axis), PACK
(several inputs stacked along a new axis), GATHER (blocks picked along an axis by
int32 coordinates; GATHER_ND by index tuples) and EMBEDDING_LOOKUP (rows picked by
int32 ids): options, traits,
and which outputs are a contiguous byte range of the input (:func:`split_views`,
planned as views: no copy).
The lowerings are in :mod:`nnopt.lowering.structure`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import GatherOptions, Graph, Op, OpOptions, PackOptions, SplitOptions
from ..lowering import structure as structure_lowering
from ..lowering.structure import split_data_input, split_layout
from .base import OpDef, Options, OutputViews, audited, table, tflm, write_fields, writer


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


_write_split = writer(SplitOptions, lambda o: {"num_splits": o.num_splits})
_write_pack = writer(PackOptions, lambda o: {"values_count": o.count, "axis": o.axis})
_write_unpack = writer(PackOptions, lambda o: {"num": o.count, "axis": o.axis})
_write_gather = write_fields(GatherOptions)


DEFINITIONS = (
    OpDef("SPLIT", "SPLIT", structure_lowering.SPLIT,
          Options("SplitOptions", _read_split(tflite.SplitOptions), _write_split),
          output_views=split_views, blob=False),
    OpDef("SPLIT_V", "SPLIT_V", structure_lowering.SPLIT,
          Options("SplitVOptions", _read_split(tflite.SplitVOptions), _write_split),
          output_views=split_views, blob=False),
    OpDef("UNPACK", "UNPACK", structure_lowering.SPLIT,
          Options("UnpackOptions", _read_unpack, _write_unpack), output_views=split_views,
          blob=False),
    OpDef("PACK", "PACK", structure_lowering.PACK, Options("PackOptions", _read_pack, _write_pack),
          blob=False),
    OpDef("GATHER", "GATHER", structure_lowering.GATHER,
          Options("GatherOptions", _read_gather, _write_gather), blob=False),
    OpDef("EMBEDDING_LOOKUP", "EMBED", structure_lowering.GATHER, blob=False),
    OpDef("GATHER_ND", "GATHER_ND", structure_lowering.GATHER_ND, blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "SPLIT": tflm("split.cc", "float32", "int8", "int16", "int32"),
    "SPLIT_V": tflm("split_v.cc", "float32", "int8", "int16", "int32"),
    "UNPACK": tflm("unpack.cc", "float32", "int8", "int32"),
    "PACK": tflm("pack.cc", "float32", "int8", "int32", "int64"),
    "GATHER": tflm("gather.cc", "float32", "int8"),
    "EMBEDDING_LOOKUP": tflm("embedding_lookup.cc", "float32", "int8"),
    "GATHER_ND": tflm("gather_nd.cc", "float32", "int8"),
})
