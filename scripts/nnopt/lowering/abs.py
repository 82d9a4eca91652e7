"""ABS -> ``nnrt_abs_f32`` / ``nnrt_table_lookup_s8`` / ``nnrt_abs_s16``.

Supported (bit-exact with TFLM's ``elementwise.cc``): float32 (``fabsf``); int8,
quantised per tensor: ``|x - zp_in|``, rescaled by ``QuantizeMultiplier(s_in / s_out)``
(the ratio in float32, as TFLM) unless the scales are equal, plus ``zp_out``, clamped:
computed here for all 256 inputs and looked up (:func:`abs_table`); int16 with zero
points 0 (quantised: the same arithmetic, clamped) or without quantisation (raw
``std::abs``, which wraps -32768).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..cdefs import DType
from ..ir import Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .activation import multiply_by_quantized_multiplier
from .base import EmitContext
from .call import Body
from .common import c_call, c_params, io_args, refuse, tensor_desc
from .table_unary import TableUnaryLowering

_F32 = np.float32
_SUPPORTED = ("float32, int8 (per-tensor) or int16 (zero points 0, or no quantisation); "
              "input and output of one dtype")


def _rescale(op: Op, x: Tensor, y: Tensor) -> dict[str, Any]:
    """TFLM's PrepareAbsRsqrt for ABS: offsets and the multiplier where scales differ."""
    assert x.quant is not None and y.quant is not None
    s_in, s_out = _F32(x.quant.scale[0]), _F32(y.quant.scale[0])
    m, sh = quantize_multiplier(float(s_in / s_out)) if s_in != s_out else (0, 0)
    if not -31 <= sh <= 30:
        raise refuse(op, f"scale ratio {float(s_in / s_out)!r} out of range",
                     "input / output scale ratios in [2^-32, 2^30)")
    return {"input_offset": int(x.quant.zero_point[0]),
            "output_offset": int(y.quant.zero_point[0]), "rescale": int(s_in != s_out),
            "multiplier": m, "shift": sh}


def abs_table(op: Op, x: Tensor, y: Tensor) -> np.ndarray:
    """The int8 ABS output for inputs -128..127, indexed by the input byte as unsigned."""
    p = _rescale(op, x, y)
    v = np.abs(np.arange(-128, 128, dtype=np.int64) - p["input_offset"])
    r = multiply_by_quantized_multiplier(v, p["multiplier"], p["shift"]) if p["rescale"] \
        else v
    by_value = np.clip(r + p["output_offset"], -128, 127).astype(np.int8)
    return np.concatenate([by_value[128:], by_value[:128]])


class AbsLowering(TableUnaryLowering):
    """The table-unary lowering, with int16 (``nnrt_abs_s16``, no table) besides."""

    dtypes: Sequence[str] = ("int8", "int16", "float32")

    def __init__(self) -> None:
        super().__init__("nnrt_abs_f32", abs_table,
                         ("nnrt/kernels/math.h", "nnrt/kernels/activation.h"), _SUPPORTED)

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects 1 input and 1 output", _SUPPORTED)
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if x.dtype not in (DType.INT8, DType.INT16, DType.FLOAT32) or y.dtype != x.dtype \
                or x.num_elements != y.num_elements:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", _SUPPORTED)
        if x.dtype == DType.FLOAT32:
            return x, y
        quantised = [t.quant is not None and bool(t.quant.scale) for t in (x, y)]
        if x.dtype == DType.INT16 and not any(quantised):
            return x, y
        for t, q in zip((x, y), quantised, strict=True):
            if not q or t.quant is None or t.quant.per_channel:
                raise refuse(op, f"{tensor_desc(t)} is not quantised per tensor", _SUPPORTED)
            if x.dtype == DType.INT16 and t.quant.zero_point[0] != 0:
                raise refuse(op, f"{tensor_desc(t)} has zero point {t.quant.zero_point[0]}",
                             "int16 zero points 0 (as TFLM)")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        x, y = self._io(graph, op)
        if x.dtype != DType.FLOAT32 and x.quant is not None and x.quant.scale:
            _rescale(op, x, y)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._io(ctx.graph, ctx.op)
        if x.dtype != DType.INT16:
            return super().emit(ctx)
        n = str(x.num_elements)
        quantised = x.quant is not None and bool(x.quant.scale)
        fields = {**(_rescale(ctx.op, x, y) if quantised else
                     {"input_offset": 0, "output_offset": 0, "rescale": 0, "multiplier": 0,
                      "shift": 0}), "saturate": int(quantised)}
        return [*c_params("nnrt_abs_s16_params_t", fields),
                *c_call("nnrt_abs_s16", ["&params", *io_args(ctx, x.index, y.index, "int16_t"), n])]


ABS = AbsLowering()
