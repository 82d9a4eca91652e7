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
from ..ops import band_of, known, spatial_of
from ..ops.base import POINT, WINDOW, BandForm, Spatial

__all__ = ["POINT", "WINDOW", "Axis", "BandForm", "Spatial", "band_of", "model_macs",
           "op_macs", "spatial_of", "window_axis"]


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one op (convolutions and fully connected layers)."""
    d = known(op)
    return d.macs(graph, op) if d is not None else 0


def model_macs(graph: Graph) -> int:
    return sum(op_macs(graph, op) for op in graph.ops)
