"""DYNAMIC_UPDATE_SLICE (the operand with a block overwritten by the update at start
indices read at run time): its definition. The output has the operand's shape
(:func:`nnopt.ops.shapes.same`, input 0). The lowering is in
:mod:`nnopt.lowering.update_slice`."""

from __future__ import annotations

from ..lowering import update_slice as update_slice_lowering
from . import shapes
from .base import OpDef, Options, audited, tflm

DEFINITIONS = (
    OpDef("DYNAMIC_UPDATE_SLICE", "UPD_SLICE", update_slice_lowering.DYNAMIC_UPDATE_SLICE,
          Options("DynamicUpdateSliceOptions"), blob=False, infer_shape=shapes.same),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "DYNAMIC_UPDATE_SLICE": tflm(None),
})
