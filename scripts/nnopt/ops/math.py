"""EXP, LOG, SQRT, RSQRT, ABS, NEG, FLOOR, CEIL, ROUND, SIN, COS, SQUARE, LOGICAL_NOT
and CAST (unary), DIV, FLOOR_DIV, FLOOR_MOD (binary) and ADD_N (n-ary): float32 math
(LOGICAL_NOT: bool; CAST: between types; ABS, RSQRT and ADD_N: int8 too; ABS: int16),
options and traits. The lowerings are :mod:`nnopt.lowering.math_f32`,
:mod:`nnopt.lowering.abs`, :mod:`nnopt.lowering.rsqrt` and :mod:`nnopt.lowering.add_n`;
the model blob does not carry these kernels yet (refused by name there)."""

from __future__ import annotations

import numpy as np
import tflite

from ..lowering import abs as abs_lowering
from ..lowering import add_n as add_n_lowering
from ..lowering import math_f32 as math_f32_lowering
from ..lowering import rsqrt as rsqrt_lowering
from ..lowering.base import Lowering
from .base import OpDef, Options, audited, tflm, write_activation
from .elementwise import _reader, point_spatial


def _unary(opcode: str, lowering: Lowering = math_f32_lowering.UNARY_MATH) -> OpDef:
    return OpDef(opcode, opcode, lowering, elementwise="unary", spatial=point_spatial,
                 blob=False)


DEFINITIONS = (
    _unary("EXP"),
    _unary("LOG"),
    _unary("SQRT"),
    OpDef("RSQRT", "RSQRT", rsqrt_lowering.RSQRT, elementwise="unary", spatial=point_spatial,
          blob=False),
    OpDef("ABS", "ABS", abs_lowering.ABS, elementwise="unary", spatial=point_spatial, blob=False),
    _unary("NEG"),
    _unary("FLOOR"),
    _unary("CEIL"),
    _unary("ROUND"),
    _unary("SIN"),
    _unary("COS"),
    _unary("SQUARE"),
    OpDef("LOGICAL_NOT", "LOGICAL_NOT", math_f32_lowering.UNARY_MATH, elementwise="unary",
          spatial=point_spatial, blob=False, fold=np.logical_not),
    _unary("CAST", math_f32_lowering.CAST),
    OpDef("DIV", "DIV", math_f32_lowering.DIV,
          Options("DivOptions", _reader(tflite.DivOptions), write_activation), elementwise="binary",
          spatial=point_spatial, blob=False),
    # every input is read at element i before the output is: in place over input 0 or 1
    OpDef("ADD_N", "ADD_N", add_n_lowering.ADD_N, elementwise="binary", spatial=point_spatial,
          blob=False),
    OpDef("FLOOR_DIV", "FLOORDIV", math_f32_lowering.FLOOR_DIV_MOD, elementwise="binary",
          spatial=point_spatial, blob=False),
    OpDef("FLOOR_MOD", "FLOORMOD", math_f32_lowering.FLOOR_DIV_MOD, elementwise="binary",
          spatial=point_spatial, blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "EXP": tflm("exp.cc", "float32"),
    "LOG": tflm("elementwise.cc", "float32"),
    "SQRT": tflm("elementwise.cc", "float32"),
    "RSQRT": tflm("elementwise.cc", "float32", "int8"),
    "ABS": tflm("elementwise.cc", "float32", "int8", "int16"),
    "NEG": tflm("neg.cc", "float32"),
    "FLOOR": tflm("floor.cc", "float32"),
    "CEIL": tflm("ceil.cc", "float32"),
    "ROUND": tflm("round.cc", "float32"),
    "SIN": tflm("elementwise.cc", "float32"),
    "COS": tflm("elementwise.cc", "float32"),
    "SQUARE": tflm("elementwise.cc", "float32"),
    "LOGICAL_NOT": tflm("elementwise.cc", "bool"),
    "CAST": tflm("cast.cc", "int8", "int16", "int32", "uint32", "float32", "bool"),
    "DIV": tflm("div.cc", "float32", "int32", "int8"),
    "ADD_N": tflm("add_n.cc", "float32", "int8"),
    "FLOOR_DIV": tflm("floor_div.cc", "float32"),
    "FLOOR_MOD": tflm("floor_mod.cc", "float32"),
})
