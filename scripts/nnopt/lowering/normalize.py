"""LOG_SOFTMAX and L2_NORMALIZATION -> ``nnrt/kernels/normalize.h``.

Supported (bit-exact with TFLM's ``log_softmax.cc`` / ``l2norm.cc`` reference paths on
a host whose libm TFLM uses): float32 of any rank, over the last axis; L2_NORMALIZATION
without a fused activation (TFLM refuses one) and with TFLM's epsilon 1e-6. The int8
forms are refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DType
from ..ir import ActivationOptions, Graph, Op, Tensor
from . import EmitContext, register
from .activation import check_io
from .elementwise import c_call, cast, refuse


class RowNormLowering:
    headers: Sequence[str] = ("nnrt/kernels/normalize.h",)
    dtypes: Sequence[str] = ("float32",)

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        x, y = check_io(graph, op, ((DType.FLOAT32, DType.FLOAT32),),
                        f"{op.opcode} of float32 over the last axis")
        if tuple(x.shape) != tuple(y.shape) or not x.shape or x.shape[-1] < 1:
            raise refuse(op, f"shapes {list(x.shape)} -> {list(y.shape)}",
                         "equal input and output shapes with a non-empty last axis")
        act = op.options.activation if isinstance(op.options, ActivationOptions) else "NONE"
        if act != "NONE":
            raise refuse(op, f"fused activation {act}", "no fused activation (as TFLM)")
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        self._io(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0

    def emit(self, ctx: EmitContext) -> list[str]:
        x, y = self._io(ctx.graph, ctx.op)
        depth = x.shape[-1]
        return c_call(f"nnrt_{ctx.op.opcode.lower()}_f32",
                      [cast(ctx, x.index, "float", True), cast(ctx, y.index, "float", False),
                       str(x.num_elements // depth), str(depth)])


register(("LOG_SOFTMAX", "L2_NORMALIZATION"), RowNormLowering())
