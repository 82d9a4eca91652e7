"""RESIZE_NEAREST_NEIGHBOR: options and traits. The lowering is
:mod:`nnopt.lowering.resize`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import OpOptions, ResizeOptions
from .base import OpDef, table


def _read(op: Any) -> OpOptions:
    o = table(tflite.ResizeNearestNeighborOptions, op)
    if o is None:
        return ResizeOptions()
    return ResizeOptions(bool(o.AlignCorners()), bool(o.HalfPixelCenters()))


DEFINITIONS = (OpDef("RESIZE_NEAREST_NEIGHBOR", "RESIZE_NN", "resize", _read, blob=False),)
