"""ADD, SUB, MUL, MAXIMUM, MINIMUM and SQUARED_DIFFERENCE (binary element-wise, numpy broadcasting):
options, traits, spatial access. The lowering is :mod:`nnopt.lowering.elementwise`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tflite

from ..arith import Axis
from ..ir import ActivationOptions, Graph, Op, OpOptions
from ..lowering import elementwise as elementwise_lowering
from .base import POINT, OpDef, Options, Spatial, activation, audited, table, tflm, write_activation


def _reader(cls: Any) -> Callable[[Any], OpOptions]:
    def read(op: Any) -> OpOptions:
        return ActivationOptions(activation(table(cls, op)))
    return read


def point_spatial(graph: Graph, op: Op) -> Spatial | None:
    """An element-wise op over equal activation shapes (constants broadcast along
    channels only) reads exactly the pixels it writes."""
    y = graph.tensors[op.outputs[0]]
    _, oh, ow, oc = y.shape
    acts = graph.activations(op)
    for t in acts:
        if graph.tensors[t].shape != y.shape:
            return None  # broadcasting between activations: not a point map
    for t in op.inputs:
        if t >= 0 and graph.tensors[t].is_constant:
            cs = graph.tensors[t].shape
            # constants broadcast along channels only (per-channel scale, scalar)
            if any(d != 1 for d in cs[:-1]) or (cs and cs[-1] not in (1, oc)):
                return None
    return Spatial(op, POINT, acts, y.index, Axis(oh, oh, 1, 1, 0), Axis(ow, ow, 1, 1, 0), 0)


DEFINITIONS = (
    OpDef("ADD", "ADD", elementwise_lowering.BINARY,
          Options("AddOptions", _reader(tflite.AddOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, fold=np.add),
    OpDef("SUB", "SUB", elementwise_lowering.BINARY,
          Options("SubOptions", _reader(tflite.SubOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, fold=np.subtract),
    OpDef("MUL", "MUL", elementwise_lowering.BINARY,
          Options("MulOptions", _reader(tflite.MulOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, fold=np.multiply),
    OpDef("MAXIMUM", "MAXIMUM", elementwise_lowering.BINARY, Options("MaximumMinimumOptions"),
          elementwise="binary", spatial=point_spatial, fold=np.maximum),
    OpDef("MINIMUM", "MINIMUM", elementwise_lowering.BINARY, Options("MaximumMinimumOptions"),
          elementwise="binary", spatial=point_spatial, fold=np.minimum),
    OpDef("SQUARED_DIFFERENCE", "SQDIFF", elementwise_lowering.SQUARED_DIFFERENCE,
          Options("SquaredDifferenceOptions"), elementwise="binary", cost="requant",
          spatial=point_spatial, blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "ADD": tflm("add.cc", "float32", "int32", "int8", "int16"),
    "SUB": tflm("sub.cc", "float32", "int8", "int16"),
    "MUL": tflm("mul.cc", "float32", "int8", "int16", "int32"),
    "MAXIMUM": tflm("maximum_minimum.cc", "float32", "int8", "int16", "int32", "int64"),
    "MINIMUM": tflm("maximum_minimum.cc", "float32", "int8", "int16", "int32", "int64"),
    "SQUARED_DIFFERENCE": tflm("squared_difference.cc", "float32", "int8", "int16", "int32"),
})
