"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: options and traits. The lowerings are
in :mod:`nnopt.lowering.resize`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import Graph, Op, OpOptions, ResizeOptions
from ..lowering import resize as resize_lowering
from .base import ROWS, BandForm, OpDef, Options, TableRows, audited, table, tflm, writer


def _read(op: Any) -> OpOptions:
    o = table(tflite.ResizeNearestNeighborOptions, op)
    if o is None:
        return ResizeOptions()
    return ResizeOptions(bool(o.AlignCorners()), bool(o.HalfPixelCenters()))


def _read_bilinear(op: Any) -> OpOptions:
    o = table(tflite.ResizeBilinearOptions, op)
    if o is None:
        return ResizeOptions()
    return ResizeOptions(bool(o.AlignCorners()), bool(o.HalfPixelCenters()))


def bilinear_band(graph: Graph, op: Op) -> BandForm | None:
    """Output rows [a, b) read the lower and upper source rows of each (the lowering's
    tables, TFLM's ComputeInterpolationValues), whatever the scale."""
    if len(op.inputs) != 2 or min(op.inputs) < 0:
        return None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    o = op.options if isinstance(op.options, ResizeOptions) else ResizeOptions()
    pairs = resize_lowering.source_rows(x, y, o)
    return BandForm(ROWS, (x.index,), (), TableRows(tuple(pairs)))


_write_resize = writer(ResizeOptions, lambda o: {
    "align_corners": o.align_corners, "half_pixel_centers": o.half_pixel_centers})


# Neither is element-wise nor an alias: the output has other dimensions than the input
# and every output pixel reads up to four input pixels, so the planner gives the output
# its own buffer, live together with the input during the op.
DEFINITIONS = (
    OpDef("RESIZE_NEAREST_NEIGHBOR", "RESIZE_NN", resize_lowering.RESIZE_NEAREST,
          Options("ResizeNearestNeighborOptions", _read), blob=False),
    OpDef("RESIZE_BILINEAR", "RESIZE_BL", resize_lowering.RESIZE_BILINEAR,
          Options("ResizeBilinearOptions", _read_bilinear, _write_resize), band=bilinear_band,
          blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "RESIZE_NEAREST_NEIGHBOR": tflm("resize_nearest_neighbor.cc", "float32", "int8", "int16"),
    "RESIZE_BILINEAR": tflm("resize_bilinear.cc", "float32", "int8"),
})
