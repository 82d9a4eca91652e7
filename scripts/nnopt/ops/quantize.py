"""QUANTIZE and DEQUANTIZE (unary element-wise): traits. The lowering is
:mod:`nnopt.lowering.quantize`."""

from __future__ import annotations

from ..lowering import quantize as quantize_lowering
from .base import OpDef, Options, audited, tflm
from .elementwise import point_spatial

DEFINITIONS = (
    OpDef("QUANTIZE", "QUANT", quantize_lowering.QUANTIZE, Options("QuantizeOptions"),
          elementwise="unary", spatial=point_spatial, blob=False),
    OpDef("DEQUANTIZE", "DEQUANT", quantize_lowering.QUANTIZE, Options("DequantizeOptions"),
          elementwise="unary", spatial=point_spatial, blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "QUANTIZE": tflm("quantize.cc", "float32", "int8", "uint8", "int16", "int32"),
    "DEQUANTIZE": tflm("dequantize.cc", "int8", "int16", "uint8"),
})
