"""REDUCE_MAX, REDUCE_MIN and SUM over constant axes (keep_dims or not), ARG_MAX and
ARG_MIN and CUMSUM along one constant axis: options and traits. The lowering is
:mod:`nnopt.lowering.reduce`; the model blob does not carry these kernels yet (refused by
name there)."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import CumsumOptions, OpOptions
from . import shapes
from .base import OpDef, table
from .pool import read_reducer


def _read_cumsum(op: Any) -> OpOptions:
    o = table(tflite.CumsumOptions, op)
    return CumsumOptions(bool(o.Exclusive()), bool(o.Reverse())) if o is not None \
        else CumsumOptions()


DEFINITIONS = (
    OpDef("REDUCE_MAX", "RMAX", "reduce", read_reducer, cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("REDUCE_MIN", "RMIN", "reduce", read_reducer, cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("SUM", "SUM", "reduce", read_reducer, cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("ARG_MAX", "ARGMAX", "reduce", cost="reduce_taps", blob=False),
    OpDef("ARG_MIN", "ARGMIN", "reduce", cost="reduce_taps", blob=False),
    OpDef("CUMSUM", "CUMSUM", "reduce", _read_cumsum, blob=False),
)
