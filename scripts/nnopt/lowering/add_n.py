"""ADD_N -> ``nnrt_add_n_f32`` / ``nnrt_add_n_s8`` (``nnrt/kernels/elementwise.h``).

Supported (bit-exact with TFLM's ``add_n.cc``): two or more inputs of the output's shape,
float32 (summed in input order from 0), or int8 with one scale and zero point for every
input (TFLM's Prepare refuses others): left shift 20, the input multiplier of
``s_in / (2 s_in)`` and the output multiplier of ``2 s_in / (2^20 s_out)`` in double
(``QuantizeMultiplierSmallerThanOneExp``), no activation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cdefs import DType
from ..ir import Graph, Op, Tensor
from .base import EmitContext, LoweringBase
from .call import Arg, Body, Expr
from .common import C_TYPE, c_call, c_params, cast, per_tensor_quant, refuse, tensor_desc
from .compare import smaller_than_one

_LEFT_SHIFT = 20  # TFLM's kAddNIntegerShift
_SUPPORTED = ("two or more float32 or int8 inputs (one quantisation for all) of the "
              "output's shape and dtype")


class AddNLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/elementwise.h",)
    dtypes: Sequence[str] = ("int8", "float32")

    def _operands(self, graph: Graph, op: Op) -> tuple[list[Tensor], Tensor]:
        if len(op.inputs) < 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            raise refuse(op, f"has {len(op.inputs)} inputs", _SUPPORTED)
        xs = [graph.tensors[t] for t in op.inputs]
        y = graph.tensors[op.outputs[0]]
        for x in xs:
            if x.dtype not in (DType.INT8, DType.FLOAT32) or x.dtype != y.dtype \
                    or tuple(x.shape) != tuple(y.shape):
                raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", _SUPPORTED)
        return xs, y

    def params_s8(self, op: Op, xs: list[Tensor], y: Tensor) -> dict[str, Any]:
        qs = {per_tensor_quant(op, x) for x in xs}
        if len(qs) != 1:
            raise refuse(op, f"inputs quantised differently: {sorted(qs)}", _SUPPORTED)
        (s_in, z_in), = qs
        s_out, z_out = per_tensor_quant(op, y)
        twice = 2.0 * s_in
        im, ish = smaller_than_one(op, s_in / twice)
        om, osh = smaller_than_one(op, twice / ((1 << _LEFT_SHIFT) * s_out))
        return {"input_offset": -z_in, "output_offset": z_out, "left_shift": _LEFT_SHIFT,
                "input_multiplier": im, "input_shift": ish, "output_multiplier": om,
                "output_shift": osh, "act_min": -128, "act_max": 127}

    def check(self, graph: Graph, op: Op) -> None:
        xs, y = self._operands(graph, op)
        if y.dtype == DType.INT8:
            self.params_s8(op, xs, y)

    def emit(self, ctx: EmitContext) -> Body:
        xs, y = self._operands(ctx.graph, ctx.op)
        ctype = C_TYPE[y.dtype]
        # the inputs as a compound literal of pointers (code, not a blob argument)
        inputs = Expr(f"(const {ctype} *const[]){{"
                      + ", ".join(f"(const {ctype} *){ctx.c_ptr(x.index)}" for x in xs) + "}")
        args: list[Arg | str] = [inputs, str(len(xs)), cast(ctx, y.index, ctype, False),
                                 str(y.num_elements)]
        if y.dtype == DType.FLOAT32:
            return c_call("nnrt_add_n_f32", args)
        return [*c_params("nnrt_add_n_s8_params_t", self.params_s8(ctx.op, xs, y)),
                *c_call("nnrt_add_n_s8", ["&params", *args])]


ADD_N = AddNLowering()
