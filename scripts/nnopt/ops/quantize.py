"""QUANTIZE and DEQUANTIZE (unary element-wise): traits. The lowering is
:mod:`nnopt.lowering.quantize`."""

from __future__ import annotations

from .base import OpDef
from .elementwise import point_spatial

DEFINITIONS = (
    OpDef("QUANTIZE", "QUANT", "quantize", elementwise="unary", spatial=point_spatial,
          blob=False),
    OpDef("DEQUANTIZE", "DEQUANT", "quantize", elementwise="unary", spatial=point_spatial,
          blob=False),
)
