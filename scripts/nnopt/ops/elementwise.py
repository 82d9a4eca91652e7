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
from .base import (
    POINT,
    BandForm,
    Kernel,
    OpDef,
    Options,
    Spatial,
    activation,
    audited,
    table,
    tflm,
    write_activation,
)


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


def broadcast_band(graph: Graph, op: Op) -> BandForm | None:
    """Row bands of a map times a per-channel vector (a squeeze-excitation block's
    MUL): the map (output-shaped activations) in bands, the ``[1,1,1,C]`` (or one
    value) activations whole in every band; point-wise maps get their spatial form.
    MUL's only: ADD and SUB would take it alike, untested so far."""
    y = graph.tensors[op.outputs[0]]
    _, oh, _, oc = y.shape
    maps, whole = [], []
    for t in dict.fromkeys(graph.activations(op)):
        shape = graph.tensors[t].shape
        if shape == y.shape:
            maps.append(t)
        elif len(shape) == 4 and shape[:3] == (1, 1, 1) and shape[3] in (1, oc):
            whole.append(t)
        else:
            return None
    if not maps or not whole:
        return None  # no broadcast activation: point_spatial's form
    for t in op.inputs:
        if t >= 0 and graph.tensors[t].is_constant:
            return None
    return BandForm(POINT, tuple(maps), tuple(whole), Axis(oh, oh, 1, 1, 0))


def _binary(kid: int, function: str, params: str, check: str) -> Kernel:
    """A binary kernel: its parameters, then input 1, input 2, output."""
    return Kernel(kid, function, (f"struct:{params}", "tensor", "tensor", "tensor"), check)


_ADD_S8, _MUL_S8 = "nnrt_add_s8_params_t", "nnrt_mul_s8_params_t"
_F32, _BCAST = "nnrt_binary_f32_params_t", "nnrt_broadcast_t"
_S32 = "nnrt_binary_s32_params_t"

DEFINITIONS = (
    OpDef("ADD", "ADD", elementwise_lowering.BINARY,
          Options("AddOptions", _reader(tflite.AddOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, fold=np.add,
          kernels=(_binary(15, "nnrt_add_s8", _ADD_S8, "add_s8"),
                   _binary(20, "nnrt_add_f32", _F32, "binary_f32"),
                   _binary(39, "nnrt_add_s16", _ADD_S8, "add_s16"),
                   _binary(40, "nnrt_add_s32", _S32, "binary_s32"))),
    OpDef("SUB", "SUB", elementwise_lowering.BINARY,
          Options("SubOptions", _reader(tflite.SubOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, fold=np.subtract,
          kernels=(_binary(16, "nnrt_sub_s8", _ADD_S8, "add_s8"),
                   _binary(21, "nnrt_sub_f32", _F32, "binary_f32"),
                   _binary(41, "nnrt_sub_s16", _ADD_S8, "add_s16"))),
    OpDef("MUL", "MUL", elementwise_lowering.BINARY,
          Options("MulOptions", _reader(tflite.MulOptions), write_activation), elementwise="binary",
          cost="requant", spatial=point_spatial, band=broadcast_band, fold=np.multiply,
          kernels=(_binary(17, "nnrt_mul_s8", _MUL_S8, "mul_s8"),
                   _binary(22, "nnrt_mul_f32", _F32, "binary_f32"),
                   _binary(42, "nnrt_mul_s16", _MUL_S8, "mul_s16"),
                   _binary(43, "nnrt_mul_s32", _S32, "binary_s32"))),
    OpDef("MAXIMUM", "MAXIMUM", elementwise_lowering.BINARY, Options("MaximumMinimumOptions"),
          elementwise="binary", spatial=point_spatial, fold=np.maximum,
          kernels=(_binary(18, "nnrt_maximum_s8", _BCAST, "minmax"),
                   _binary(23, "nnrt_maximum_f32", _BCAST, "minmax"),
                   *(_binary(44 + k, f"nnrt_maximum_{s}", _BCAST, "minmax")
                     for k, s in enumerate(("s16", "s32", "s64"))))),
    OpDef("MINIMUM", "MINIMUM", elementwise_lowering.BINARY, Options("MaximumMinimumOptions"),
          elementwise="binary", spatial=point_spatial, fold=np.minimum,
          kernels=(_binary(19, "nnrt_minimum_s8", _BCAST, "minmax"),
                   _binary(24, "nnrt_minimum_f32", _BCAST, "minmax"),
                   *(_binary(47 + k, f"nnrt_minimum_{s}", _BCAST, "minmax")
                     for k, s in enumerate(("s16", "s32", "s64"))))),
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
