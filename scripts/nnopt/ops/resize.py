"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: options and traits. The lowerings are
in :mod:`nnopt.lowering.resize`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import OpOptions, ResizeOptions
from ..lowering import resize as resize_lowering
from .base import OpDef, Options, audited, table, tflm


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


# Neither is element-wise nor an alias: the output has other dimensions than the input
# and every output pixel reads up to four input pixels, so the planner gives the output
# its own buffer, live together with the input during the op.
DEFINITIONS = (
    OpDef("RESIZE_NEAREST_NEIGHBOR", "RESIZE_NN", resize_lowering.RESIZE_NEAREST,
          Options("ResizeNearestNeighborOptions", _read), blob=False),
    OpDef("RESIZE_BILINEAR", "RESIZE_BL", resize_lowering.RESIZE_BILINEAR,
          Options("ResizeBilinearOptions", _read_bilinear), blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "RESIZE_NEAREST_NEIGHBOR": tflm("resize_nearest_neighbor.cc", "float32", "int8", "int16"),
    "RESIZE_BILINEAR": tflm("resize_bilinear.cc", "float32", "int8"),
})
