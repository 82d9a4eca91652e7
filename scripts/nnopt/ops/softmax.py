"""SOFTMAX: options. The lowering is :mod:`nnopt.lowering.softmax`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import OpOptions, SoftmaxOptions
from ..lowering import softmax as softmax_lowering
from .base import OpDef, Options, table, writer


def _read(op: Any) -> OpOptions:
    o = table(tflite.SoftmaxOptions, op)
    return SoftmaxOptions(float(o.Beta()) if o is not None else 1.0)


_write = writer(SoftmaxOptions, lambda o: {"beta": o.beta})


DEFINITIONS = (OpDef("SOFTMAX", "SOFTMAX", softmax_lowering.SOFTMAX,
                     Options("SoftmaxOptions", _read, _write)),)
