"""SOFTMAX: options. The lowering is :mod:`nnopt.lowering.softmax`."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import OpOptions, SoftmaxOptions
from ..lowering import softmax as softmax_lowering
from . import shapes
from .base import Kernel, OpDef, Options, audited, table, tflm, writer


def _read(op: Any) -> OpOptions:
    o = table(tflite.SoftmaxOptions, op)
    return SoftmaxOptions(float(o.Beta()) if o is not None else 1.0)


_write = writer(SoftmaxOptions, lambda o: {"beta": o.beta})


_S8 = ("struct:nnrt_softmax_s8_params_t", "tensor", "tensor", "i32", "i32")
_S16 = ("struct:nnrt_softmax_s16_params_t", "tensor", "tensor", "i32", "i32")

DEFINITIONS = (OpDef("SOFTMAX", "SOFTMAX", softmax_lowering.SOFTMAX,
                     Options("SoftmaxOptions", _read, _write),
                     infer_shape=shapes.same, kernels=(
                         Kernel(11, "nnrt_softmax_s8", _S8, "softmax_s8"),
                         Kernel(12, "nnrt_softmax_s8_s16", _S8, "softmax_s8"),
                         Kernel(13, "nnrt_softmax_f32", ("f32", "tensor", "tensor", "i32", "i32"),
                                "softmax_f32"),
                         Kernel(53, "nnrt_softmax_s16", _S16, "softmax_s16"))),)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "SOFTMAX": tflm("softmax.cc", "float32", "int8", "int16"),
})
