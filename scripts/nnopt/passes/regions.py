"""Spatial access patterns: which input rows and columns an output region reads.

The analysis behind everything that goes below the per-operator bound (partial overlap
of an op's input and output, patch-based stages): for a sliding-window op (the
definitions with a ``window`` trait) output rows ``[a, b)`` read input rows
``[max(0, a*s - pad), min(H, (b-1)*s - pad + (k-1)*d + 1))``; a point-wise op
(element-wise, concatenation along channels) reads the same pixels it writes. Each
operator's definition (:mod:`nnopt.ops`) describes its own pattern; padding follows
TFLM (:func:`nnopt.arith.window_axis`) or an explicit padding left by PAD folding.

Only NHWC 4-D ops with batch 1 are described (:func:`spatial_of` returns None for
anything else, and callers then leave the op alone).
"""

from __future__ import annotations

from ..arith import Axis, window_axis
from ..ir import Graph, Op
from ..ops import known
from ..ops.base import POINT, WINDOW, BandForm, OpDef, Spatial

__all__ = ["POINT", "WINDOW", "Axis", "BandForm", "Spatial", "band_of", "model_macs",
           "op_macs", "spatial_of", "window_axis"]


def _is_4d_batch1(graph: Graph, t: int) -> bool:
    shape = graph.tensors[t].shape
    return len(shape) == 4 and shape[0] == 1


def _nhwc(graph: Graph, op: Op) -> OpDef | None:
    """The op's definition when it is a batch-1 NHWC op (one output), else None."""
    d = known(op)
    if d is None or len(op.outputs) != 1 or not _is_4d_batch1(graph, op.outputs[0]):
        return None
    acts = graph.activations(op)
    if not acts or not all(_is_4d_batch1(graph, t) for t in acts):
        return None
    return d


def spatial_of(graph: Graph, op: Op) -> Spatial | None:
    """The op's spatial access pattern, or None if it is not a batch-1 NHWC op whose
    output rows depend on a bounded band of input rows."""
    d = _nhwc(graph, op)
    return d.spatial(graph, op) if d is not None else None


def band_of(graph: Graph, op: Op) -> BandForm | None:
    """How the op runs in row bands (``passes.fm_bands``): its definition's ``band``
    form (broadcast binary ops, global pools and means, resizes, transposed
    convolutions), else its spatial pattern; None when it has neither (batch-1 NHWC
    ops only)."""
    d = _nhwc(graph, op)
    if d is None:
        return None
    form = d.band(graph, op) if d.band is not None else None
    if form is not None:
        return form
    sp = d.spatial(graph, op)
    return BandForm.of_spatial(sp) if sp is not None else None


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one op (convolutions and fully connected layers)."""
    d = known(op)
    return d.macs(graph, op) if d is not None else 0


def model_macs(graph: Graph) -> int:
    return sum(op_macs(graph, op) for op in graph.ops)
