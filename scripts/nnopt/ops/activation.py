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
from .base import Kernel, OpDef, Options, audited, table, tflm, writer
from .elementwise import point_spatial


def _read_leaky(op: Any) -> OpOptions:
    o = table(tflite.LeakyReluOptions, op)
    return LeakyReluOptions(float(o.Alpha()) if o is not None else 0.2)


def _unary(opcode: str, label: str, **kw: Any) -> OpDef:
    return OpDef(opcode, label, activation_lowering.ACTIVATION, elementwise="unary",
                 spatial=point_spatial, **kw)


_write_leaky = writer(LeakyReluOptions, lambda o: {"alpha": o.alpha})

# int8: a clamp, or the activation as a 256-entry table (table, x, y, count)
CLAMP_S8 = Kernel(28, "nnrt_clamp_s8", ("i32", "i32", "tensor", "tensor", "i32"), "clamp_s8")
# int16 RELU6 (TFLM's Relu6Quantized<int16_t>): the same clamp on int16
CLAMP_S16 = Kernel(52, "nnrt_clamp_s16", ("i32", "i32", "tensor", "tensor", "i32"), "clamp_s16")
TABLE_LOOKUP_S8 = Kernel(27, "nnrt_table_lookup_s8", ("tensor", "tensor", "tensor", "i32"),
                         "table_lookup_s8")


def _f32(kid: int, name: str) -> Kernel:
    """The float32 kernel of a unary activation: x, y, count."""
    return Kernel(kid, f"nnrt_{name}_f32", ("tensor", "tensor", "i32"), "unary_f32")



DEFINITIONS = (
    _unary("RELU", "RELU", kernels=(CLAMP_S8, _f32(29, "relu"))),
    _unary("RELU6", "RELU6", kernels=(CLAMP_S8, _f32(30, "relu6"), CLAMP_S16)),
    _unary("LEAKY_RELU", "LRELU", options=Options("LeakyReluOptions", _read_leaky, _write_leaky),
           blob=False),
    _unary("LOGISTIC", "SIGMOID", kernels=(TABLE_LOOKUP_S8, _f32(31, "logistic"))),
    _unary("TANH", "TANH", kernels=(TABLE_LOOKUP_S8, _f32(32, "tanh"))),
    _unary("HARD_SWISH", "HSWISH", options=Options("HardSwishOptions"),
           kernels=(TABLE_LOOKUP_S8, _f32(33, "hard_swish"))),
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
