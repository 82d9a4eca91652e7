"""PRELU -> ``nnrt_prelu_s8`` / ``nnrt_prelu_f32`` (``nnrt/kernels/activation.h``).

Supported (bit-exact with TFLM's ``prelu.cc`` / reference ``BroadcastPrelu4DSlow``):
int8 input, alpha and output quantised per tensor, with TFLM's two output multipliers
computed in double as ``CalculatePreluParams`` does (``s_in / s_out`` for x >= 0,
``s_in * s_alpha / s_out`` for x < 0); float32 (``x >= 0 ? x : x * alpha``). Alpha
broadcasts against the input with numpy rules (a walk of the output shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cdefs import C_TYPE, MAX_DIMS, DType
from ..ir import Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .base import EmitContext, LoweringBase
from .call import Body, Done
from .common import c_call, c_params, cast, per_tensor_quant, refuse, tensor_desc
from .elementwise import Broadcast, broadcast_descriptor

_SUPPORTED = ("int8 input, alpha and output (per-tensor quantised) or float32, alpha "
              "broadcasting to the input's shape")


class PreluLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/activation.h",)
    dtypes: Sequence[str] = ("int8", "float32")

    def _operands(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, Broadcast]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects an input, an alpha and 1 output", _SUPPORTED)
        x, alpha = (graph.tensors[t] for t in op.inputs)
        y = graph.tensors[op.outputs[0]]
        if x.dtype not in (DType.INT8, DType.FLOAT32) or alpha.dtype != x.dtype \
                or y.dtype != x.dtype:
            raise refuse(op, f"{tensor_desc(x)}, alpha {tensor_desc(alpha)} -> "
                         f"{tensor_desc(y)}", _SUPPORTED)
        bc = broadcast_descriptor(x.shape, alpha.shape, y.shape)
        if bc is None:
            raise refuse(op, f"alpha shape {list(alpha.shape)} does not broadcast with the "
                         f"input shape {list(x.shape)} to {list(y.shape)}", _SUPPORTED)
        if len(bc.dims) > MAX_DIMS:
            raise refuse(op, f"broadcast needs {len(bc.dims)} dimensions after merging",
                         f"at most {MAX_DIMS}")
        return x, alpha, y, bc

    def params_s8(self, op: Op, x: Tensor, alpha: Tensor, y: Tensor) -> dict[str, Any]:
        s_in, z_in = per_tensor_quant(op, x)
        s_a, z_a = per_tensor_quant(op, alpha)
        s_out, z_out = per_tensor_quant(op, y)
        m1, sh1 = quantize_multiplier(s_in / s_out)
        m2, sh2 = quantize_multiplier(s_in * s_a / s_out)
        for sh in (sh1, sh2):
            if not -31 <= sh <= 30:
                raise refuse(op, f"a rescale factor (shift {sh}) is out of range",
                             "scale ratios between 2^-32 and 2^30")
        return {"input_offset": -z_in, "alpha_offset": -z_a, "output_offset": z_out,
                "output_multiplier_1": m1, "output_shift_1": sh1,
                "output_multiplier_2": m2, "output_shift_2": sh2}

    def check(self, graph: Graph, op: Op) -> None:
        x, alpha, y, _ = self._operands(graph, op)
        if x.dtype == DType.INT8:
            self.params_s8(op, x, alpha, y)

    def emit(self, ctx: EmitContext) -> Body:
        x, alpha, y, bc = self._operands(ctx.graph, ctx.op)
        if y.num_elements == 0:
            return [Done()]
        ctype = C_TYPE[x.dtype]
        args = [cast(ctx, x.index, ctype, True), cast(ctx, alpha.index, ctype, True),
                cast(ctx, y.index, ctype, False)]
        if x.dtype == DType.FLOAT32:
            return [*c_params("nnrt_broadcast_t", bc.c(), "bcast"),
                    *c_call("nnrt_prelu_f32", ["&bcast", *args])]
        fields = {"bcast": bc.c(), **self.params_s8(ctx.op, x, alpha, y)}
        return [*c_params("nnrt_prelu_s8_params_t", fields),
                *c_call("nnrt_prelu_s8", ["&params", *args])]


PRELU = PreluLowering()
