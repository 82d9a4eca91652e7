"""SOFTMAX: options. The lowering is :mod:`nnopt.lowering.softmax`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import OpOptions, SoftmaxOptions
from . import shapes
from .base import OpDef, table


def _read(op: Any) -> OpOptions:
    o = table(tflite.SoftmaxOptions, op)
    return SoftmaxOptions(float(o.Beta()) if o is not None else 1.0)


DEFINITIONS = (OpDef("SOFTMAX", "SOFTMAX", "softmax", _read, infer_shape=shapes.same),)
