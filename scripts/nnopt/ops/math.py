"""EXP, LOG, SQRT, RSQRT, ABS, NEG (unary) and DIV (binary): float32 math, options and
traits. The lowering is :mod:`nnopt.lowering.math_f32`; the model blob does not carry
these kernels yet (refused by name there)."""

from __future__ import annotations

import tflite

from .base import OpDef
from .elementwise import _reader, point_spatial


def _unary(opcode: str, lowering: str = "math_f32") -> OpDef:
    return OpDef(opcode, opcode, lowering, elementwise="unary", spatial=point_spatial,
                 blob=False)


DEFINITIONS = (
    _unary("EXP"),
    _unary("LOG"),
    _unary("SQRT"),
    _unary("RSQRT", "rsqrt"),  # also int8 (lowering.rsqrt)
    _unary("ABS"),
    _unary("NEG"),
    OpDef("DIV", "DIV", "math_f32", _reader(tflite.DivOptions), elementwise="binary",
          spatial=point_spatial, blob=False),
)
