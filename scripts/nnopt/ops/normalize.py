"""LOG_SOFTMAX and L2_NORMALIZATION: row-wise over the last axis, options and traits.
The lowering is :mod:`nnopt.lowering.normalize`; the model blob does not carry these
kernels yet (refused by name there)."""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import ActivationOptions, OpOptions
from ..lowering import normalize as normalize_lowering
from .base import OpDef, Options, activation, audited, table, tflm, write_activation


def _read_l2(op: Any) -> OpOptions:
    return ActivationOptions(activation(table(tflite.L2NormOptions, op)))


DEFINITIONS = (
    OpDef("LOG_SOFTMAX", "LOGSOFTMAX", normalize_lowering.ROW_NORM, blob=False),
    OpDef("L2_NORMALIZATION", "L2NORM", normalize_lowering.ROW_NORM,
          Options("L2NormOptions", _read_l2, write_activation), blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "LOG_SOFTMAX": tflm("log_softmax.cc", "float32", "int8"),
    "L2_NORMALIZATION": tflm("l2norm.cc", "float32", "int8"),
})
