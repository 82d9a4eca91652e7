"""EXP, LOG, SQRT, RSQRT, ABS, NEG, FLOOR, CEIL, ROUND, SIN, COS, SQUARE and DIV,
float32, and LOGICAL_NOT, bool -> ``nnrt/kernels/math.h``.

TFLM's reference kernels compute these with the C/C++ math library (std::exp ...) and
``x1 / x2``; nnrt's do the same per element, so the results are bit-exact on a target
whose libm TFLM uses too. ROUND is TFLM's RoundToNearest (half to even). Other dtypes
are refused (:class:`UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..cdefs import MAX_DIMS, DType
from ..errors import UnsupportedError
from ..ir import Graph, Op, Tensor
from .activation import UNARY_F32_CHECK, check_io
from .base import EmitContext, LoweringBase
from .call import Arg, Body, Done, KernelCheck
from .common import c_call, c_params, cast, refuse, tensor_desc
from .elementwise import BinaryLowering, Broadcast, _operands, broadcast_descriptor

UNARY_FLOAT = ("EXP", "LOG", "SQRT", "NEG", "FLOOR", "CEIL", "ROUND", "SIN",
               "COS", "SQUARE")
UNARY_BOOL = ("LOGICAL_NOT",)
_KERNEL_TYPE = {DType.FLOAT32: ("float", "f32"), DType.BOOL: ("bool", "b")}


class UnaryMathLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    checks: Sequence[KernelCheck] = (UNARY_F32_CHECK,)
    dtypes_by_opcode: Mapping[str, Sequence[str]] = {
        **{code: ("float32",) for code in UNARY_FLOAT},
        **{code: ("bool",) for code in UNARY_BOOL}}

    def check(self, graph: Graph, op: Op) -> None:
        t = DType.BOOL if op.opcode in UNARY_BOOL else DType.FLOAT32
        check_io(graph, op, ((t, t),), f"{op.opcode} {t.name.lower()}")

    def emit(self, ctx: EmitContext) -> Body:
        x, y = ctx.graph.tensors[ctx.op.inputs[0]], ctx.graph.tensors[ctx.op.outputs[0]]
        ctype, suffix = _KERNEL_TYPE[x.dtype]
        return c_call(f"nnrt_{ctx.op.opcode.lower()}_{suffix}",
                      [cast(ctx, x.index, ctype, True), cast(ctx, y.index, ctype, False),
                       str(x.num_elements)])


_CAST_FROM = (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32, DType.BOOL)
_CAST_TO = (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)


class CastLowering(LoweringBase):
    """CAST: TFLM's static_cast per element (cast.cc), quantisation ignored as TFLM does."""

    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    dtypes: Sequence[str] = tuple(f"{a.name.lower()}->{b.name.lower()}"
                                  for a in _CAST_FROM for b in _CAST_TO)

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        supported = ("int8, int16, int32, float32 or bool to int8, int16, int32 or float32 "
                     "(TFLM's cast.cc)")
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects 1 input and 1 output", supported)
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        if x.dtype not in _CAST_FROM or y.dtype not in _CAST_TO \
                or x.num_elements != y.num_elements:
            raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}", supported)
        return x, y

    def check(self, graph: Graph, op: Op) -> None:
        self._io(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        x, y = self._io(ctx.graph, ctx.op)
        return c_call("nnrt_cast", [f"NNRT_{x.dtype.name}", f"NNRT_{y.dtype.name}",
                                    ctx.ptr(x.index), ctx.ptr(y.index), str(x.num_elements)])


class FloorDivModLowering(LoweringBase):
    """FLOOR_DIV and FLOOR_MOD, float32 with broadcasting (TFLM's floor_div.cc and
    floor_mod.cc take no other type)."""

    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    dtypes: Sequence[str] = ("float32",)

    def _operands(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, Tensor, Broadcast]:
        a, b, out = _operands(graph, op)
        if any(t.dtype != DType.FLOAT32 for t in (a, b, out)):
            raise refuse(op, f"{tensor_desc(a)}, {tensor_desc(b)} -> {tensor_desc(out)}",
                         "float32 inputs and output")
        bc = broadcast_descriptor(a.shape, b.shape, out.shape)
        if bc is None or len(bc.dims) > MAX_DIMS:
            raise refuse(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast "
                         f"to the output shape {list(out.shape)}",
                         f"numpy broadcasting in at most {MAX_DIMS} merged dimensions")
        return a, b, out, bc

    def check(self, graph: Graph, op: Op) -> None:
        self._operands(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        a, b, out, bc = self._operands(ctx.graph, ctx.op)
        if out.num_elements == 0:
            return [Done()]
        args: list[Arg | str] = [cast(ctx, a.index, "float", True),
                                 cast(ctx, b.index, "float", True)]
        if ctx.op.opcode == "FLOOR_DIV":
            args.append(str(b.num_elements))
        args.append(cast(ctx, out.index, "float", False))
        return [*c_params("nnrt_broadcast_t", bc.c(), "bcast"),
                *c_call(f"nnrt_{ctx.op.opcode.lower()}_f32", ["&bcast", *args])]


class DivLowering(BinaryLowering):
    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    dtypes: Sequence[str] = ("float32",)

    def check(self, graph: Graph, op: Op) -> None:
        a, b, out = _operands(graph, op)
        if any(t.dtype != DType.FLOAT32 for t in (a, b, out)):
            raise UnsupportedError(f"op {op.index} (DIV): only float32 is supported",
                                   hint="DIV of float32 tensors")
        super().check(graph, op)


UNARY_MATH = UnaryMathLowering()
DIV = DivLowering()
CAST = CastLowering()
FLOOR_DIV_MOD = FloorDivModLowering()
