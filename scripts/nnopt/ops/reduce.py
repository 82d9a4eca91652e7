"""REDUCE_MAX, REDUCE_MIN, SUM and REDUCE_ALL (bool) over constant axes (keep_dims or
not), ARG_MAX and ARG_MIN and CUMSUM along one constant axis: options and traits. The
lowering is :mod:`nnopt.lowering.reduce` (REDUCE_ALL's :mod:`nnopt.lowering.reduce_all`);
the model blob does not carry these kernels yet (refused by name there)."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import CumsumOptions, OpOptions
from ..lowering import reduce as reduce_lowering
from ..lowering import reduce_all as reduce_all_lowering
from . import shapes
from .base import OpDef, Options, audited, table, tflm, write_reducer
from .pool import read_reducer


def _read_cumsum(op: Any) -> OpOptions:
    o = table(tflite.CumsumOptions, op)
    return CumsumOptions(bool(o.Exclusive()), bool(o.Reverse())) if o is not None \
        else CumsumOptions()


DEFINITIONS = (
    OpDef("REDUCE_MAX", "RMAX", reduce_lowering.REDUCE,
          Options("ReducerOptions", read_reducer, write_reducer), cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("REDUCE_MIN", "RMIN", reduce_lowering.REDUCE,
          Options("ReducerOptions", read_reducer, write_reducer), cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("REDUCE_ALL", "RALL", reduce_all_lowering.REDUCE_ALL,
          Options("ReducerOptions", read_reducer, write_reducer), cost="reduce_taps", blob=False,
          infer_shape=shapes.reduce),
    OpDef("SUM", "SUM", reduce_lowering.SUM, Options("ReducerOptions", read_reducer, write_reducer),
          cost="reduce_taps", blob=False, infer_shape=shapes.reduce),
    OpDef("ARG_MAX", "ARGMAX", reduce_lowering.ARG, Options("ArgMaxOptions"), cost="reduce_taps",
          blob=False),
    OpDef("ARG_MIN", "ARGMIN", reduce_lowering.ARG, Options("ArgMinOptions"), cost="reduce_taps",
          blob=False),
    OpDef("CUMSUM", "CUMSUM", reduce_lowering.CUMSUM, Options("CumsumOptions", _read_cumsum),
          blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "REDUCE_MAX": tflm("reduce.cc", "float32", "int8"),
    "REDUCE_MIN": tflm(None),
    "REDUCE_ALL": tflm(None),
    "SUM": tflm("reduce.cc", "float32", "int8", "int16"),
    "ARG_MAX": tflm("arg_min_max.cc", "float32", "int8"),
    "ARG_MIN": tflm("arg_min_max.cc", "float32", "int8"),
    "CUMSUM": tflm("cumsum.cc", "float32", "int8"),
})
