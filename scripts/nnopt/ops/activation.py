"""RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH and ELU (unary element-wise) and
PRELU (binary: input and a broadcast alpha): options and traits. The lowerings are
:mod:`nnopt.lowering.activation`, :mod:`nnopt.lowering.elu` and
:mod:`nnopt.lowering.prelu`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import LeakyReluOptions, OpOptions
from ..lowering import activation as activation_lowering
from ..lowering import elu as elu_lowering
from ..lowering import prelu as prelu_lowering
from .base import OpDef, Options, audited, table, tflm, writer
from .elementwise import point_spatial


def _read_leaky(op: Any) -> OpOptions:
    o = table(tflite.LeakyReluOptions, op)
    return LeakyReluOptions(float(o.Alpha()) if o is not None else 0.2)


def _unary(opcode: str, label: str, **kw: Any) -> OpDef:
    return OpDef(opcode, label, activation_lowering.ACTIVATION, elementwise="unary",
                 spatial=point_spatial, **kw)


_write_leaky = writer(LeakyReluOptions, lambda o: {"alpha": o.alpha})


DEFINITIONS = (
    _unary("RELU", "RELU"),
    _unary("RELU6", "RELU6"),
    _unary("LEAKY_RELU", "LRELU", options=Options("LeakyReluOptions", _read_leaky, _write_leaky),
           blob=False),
    _unary("LOGISTIC", "SIGMOID"),
    _unary("TANH", "TANH"),
    _unary("HARD_SWISH", "HSWISH", options=Options("HardSwishOptions")),
    OpDef("ELU", "ELU", elu_lowering.ELU, elementwise="unary", spatial=point_spatial, blob=False),
    OpDef("PRELU", "PRELU", prelu_lowering.PRELU, elementwise="binary", spatial=point_spatial,
          blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "RELU": tflm("activations.cc", "float32", "int8"),
    "RELU6": tflm("activations.cc", "float32", "int8", "int16"),
    "LEAKY_RELU": tflm("leaky_relu.cc", "float32", "int8", "int16"),
    "LOGISTIC": tflm("logistic.cc", "float32", "int8", "int16"),
    "TANH": tflm("tanh.cc", "float32", "int8", "int16"),
    "HARD_SWISH": tflm("hard_swish.cc", "float32", "int8"),
    "ELU": tflm("elu.cc", "float32", "int8"),
    "PRELU": tflm("prelu.cc", "float32", "int8"),
})
