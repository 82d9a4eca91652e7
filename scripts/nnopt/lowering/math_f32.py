"""EXP, LOG, SQRT, RSQRT, ABS, NEG and DIV, float32 -> ``nnrt/kernels/math.h``.

TFLM's reference kernels compute these with the C/C++ math library (std::exp ...) and
``x1 / x2``; nnrt's do the same per element, so the results are bit-exact on a target
whose libm TFLM uses too. int8 variants are refused (:class:`UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import Graph, Op
from . import EmitContext, register
from .activation import check_io
from .call import Body, Call, TensorArg, lit
from .elementwise import BinaryLowering, _operands

UNARY_MATH = ("EXP", "LOG", "SQRT", "RSQRT", "ABS", "NEG")


class UnaryMathLowering:
    headers: Sequence[str] = ("nnrt/kernels/math.h",)

    def check(self, graph: Graph, op: Op) -> None:
        check_io(graph, op, ((DType.FLOAT32, DType.FLOAT32),), f"{op.opcode} float32")

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0

    def emit(self, ctx: EmitContext) -> Body:
        x, y = ctx.graph.tensors[ctx.op.inputs[0]], ctx.graph.tensors[ctx.op.outputs[0]]
        return [Call(f"nnrt_{ctx.op.opcode.lower()}_f32",
                     (TensorArg(x.index, "float", True), TensorArg(y.index, "float"),
                      lit(x.num_elements)), wrap=False)]


class DivLowering(BinaryLowering):
    headers: Sequence[str] = ("nnrt/kernels/math.h",)

    def check(self, graph: Graph, op: Op) -> None:
        a, b, out = _operands(graph, op)
        if any(t.dtype != DType.FLOAT32 for t in (a, b, out)):
            raise UnsupportedError(f"op {op.index} (DIV): only float32 is supported",
                                   hint="DIV of float32 tensors")
        super().check(graph, op)


register(UNARY_MATH, UnaryMathLowering())
register(("DIV",), DivLowering())
