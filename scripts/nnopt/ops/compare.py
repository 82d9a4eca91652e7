"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL (bool output) and
LOGICAL_AND, LOGICAL_OR (bool): binary element-wise with numpy broadcasting; SELECT_V2
(a bool condition choosing between x and y, three-way broadcasting): options and traits.
The lowering is :mod:`nnopt.lowering.compare`; the model blob does not carry these
kernels yet (refused by name there)."""

from __future__ import annotations

import numpy as np

from ..lowering import compare as compare_lowering
from .base import OpDef, audited, tflm
from .elementwise import point_spatial

COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
LOGICAL = ("LOGICAL_AND", "LOGICAL_OR")
_FOLD = dict(zip((*COMPARISONS, *LOGICAL),
                 (np.equal, np.not_equal, np.greater, np.greater_equal, np.less,
                  np.less_equal, np.logical_and, np.logical_or), strict=True))

DEFINITIONS = (
    *(OpDef(code, code, compare_lowering.COMPARE, elementwise="binary", spatial=point_spatial,
            blob=False, fold=_FOLD[code])
      for code in (*COMPARISONS, *LOGICAL)),
    # cond ? x : y; element i of the condition and of x is read before the output's is
    # written, so the output may overwrite either (same element size, no broadcast)
    OpDef("SELECT_V2", "SELECT", compare_lowering.SELECT, elementwise="binary", blob=False,
          select=True),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "EQUAL": tflm("comparisons.cc", "bool", "float32", "int8", "int32", "int64"),
    "NOT_EQUAL": tflm("comparisons.cc", "bool", "float32", "int8", "int32", "int64"),
    "GREATER": tflm("comparisons.cc", "float32", "int8", "int32", "int64"),
    "GREATER_EQUAL": tflm("comparisons.cc", "float32", "int8", "int32", "int64"),
    "LESS": tflm("comparisons.cc", "float32", "int8", "int32", "int64"),
    "LESS_EQUAL": tflm("comparisons.cc", "float32", "int8", "int32", "int64"),
    "LOGICAL_AND": tflm("logical.cc", "bool"),
    "LOGICAL_OR": tflm("logical.cc", "bool"),
    "SELECT_V2": tflm("select.cc", "float32", "int8", "int16"),
})
