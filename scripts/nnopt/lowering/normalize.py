"""LOG_SOFTMAX and L2_NORMALIZATION -> ``nnrt/kernels/normalize.h``.

Supported (bit-exact with TFLM's ``log_softmax.cc`` / ``l2norm.cc`` reference paths on
a host whose libm TFLM uses): float32 of any rank, over the last axis; L2_NORMALIZATION
without a fused activation (TFLM refuses one) and with TFLM's epsilon 1e-6, and int8
(TFLM's integer kernel: a fixed-point inverse square root per row, outputs in 1/128
units with zero point 0 whatever the output tensor says, as TFLM). int8 LOG_SOFTMAX is
refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..cdefs import DType
from ..ir import ActivationOptions, Graph, Op, Tensor
from . import EmitContext, register
from .activation import check_io
from .call import Body
from .elementwise import c_call, io_args, per_tensor_quant, refuse


class RowNormLowering:
    headers: Sequence[str] = ("nnrt/kernels/normalize.h",)
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {"LOG_SOFTMAX": ("float32",),
                                                     "L2_NORMALIZATION": ("int8", "float32")}

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        combos = [(DType.FLOAT32, DType.FLOAT32)]
        if op.opcode == "L2_NORMALIZATION":
            combos.append((DType.INT8, DType.INT8))
        x, y = check_io(graph, op, combos, f"{op.opcode} of "
                        f"{' or '.join(self.dtypes_by_opcode[op.opcode])} over the last axis")
        if tuple(x.shape) != tuple(y.shape) or not x.shape or x.shape[-1] < 1:
            raise refuse(op, f"shapes {list(x.shape)} -> {list(y.shape)}",
                         "equal input and output shapes with a non-empty last axis")
        act = op.options.activation if isinstance(op.options, ActivationOptions) else "NONE"
        if act != "NONE":
            raise refuse(op, f"fused activation {act}", "no fused activation (as TFLM)")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        x, _ = self._io(graph, op)
        if x.dtype == DType.INT8:
            per_tensor_quant(op, x)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._io(ctx.graph, ctx.op)
        depth = x.shape[-1]
        if x.dtype == DType.INT8:
            _, zp = per_tensor_quant(ctx.op, x)
            return c_call("nnrt_l2_normalization_s8",
                          [*io_args(ctx, x.index, y.index, "int8_t"),
                           str(x.num_elements // depth), str(depth), str(zp)])
        return c_call(f"nnrt_{ctx.op.opcode.lower()}_f32",
                      [*io_args(ctx, x.index, y.index, "float"),
                       str(x.num_elements // depth), str(depth)])


register(("LOG_SOFTMAX", "L2_NORMALIZATION"), RowNormLowering())
