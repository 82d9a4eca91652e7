"""QUANTIZE and DEQUANTIZE (unary element-wise): traits. The lowering is
:mod:`nnopt.lowering.quantize`."""

from __future__ import annotations

from ..lowering import quantize as quantize_lowering
from .base import OpDef, Options
from .elementwise import point_spatial

DEFINITIONS = (
    OpDef("QUANTIZE", "QUANT", quantize_lowering.QUANTIZE, Options("QuantizeOptions"),
          elementwise="unary", spatial=point_spatial, blob=False),
    OpDef("DEQUANTIZE", "DEQUANT", quantize_lowering.QUANTIZE, Options("DequantizeOptions"),
          elementwise="unary", spatial=point_spatial, blob=False),
)
