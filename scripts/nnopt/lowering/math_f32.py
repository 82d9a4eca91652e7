"""EXP, LOG, SQRT, RSQRT, ABS, NEG, FLOOR, CEIL, ROUND, SIN, COS, SQUARE and DIV,
float32 (DIV also int8 and int32), and LOGICAL_NOT, bool -> ``nnrt/kernels/math.h``.

TFLM's reference kernels compute these with the C/C++ math library (std::exp ...) and
``x1 / x2``; nnrt's do the same per element, so the results are bit-exact on a target
whose libm TFLM uses too. ROUND is TFLM's RoundToNearest (half to even). Other dtypes
are refused (:class:`UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..cdefs import MAX_DIMS, DType
from ..errors import UnsupportedError
from ..ir import Graph, Op, Tensor
from ..multiplier import quantize_multiplier
from .activation import UNARY_F32_CHECK, check_io
from .base import EmitContext, LoweringBase
from .call import Arg, Body, Done, KernelCheck
from .common import act_range_s8, c_call, c_params, cast, per_tensor_quant, refuse, tensor_desc
from .elementwise import (
    RANGE,
    BinaryLowering,
    Broadcast,
    _activation,
    _operands,
    broadcast_descriptor,
)

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


_CAST_FROM = (DType.INT8, DType.INT16, DType.INT32, DType.UINT32, DType.FLOAT32, DType.BOOL)
_CAST_TO = (DType.INT8, DType.INT16, DType.INT32, DType.UINT32, DType.FLOAT32)
#: beyond TFLM's cast.cc, the conversions at a model's boundary (an ONNX model's int64 and
#: float64 inputs and outputs): narrowing checked by the kernel, widening exact
CAST_BOUNDARY = ((DType.INT64, DType.INT32), (DType.FLOAT64, DType.FLOAT32),
                 (DType.INT32, DType.INT64), (DType.FLOAT32, DType.FLOAT64))


class CastLowering(LoweringBase):
    """CAST: TFLM's static_cast per element (cast.cc), quantisation ignored as TFLM does;
    and the model-boundary conversions of :data:`CAST_BOUNDARY` (int64 -> int32 and
    float64 -> float32 fail the invocation with NNRT_ERR_ARG on a value that does not
    fit)."""

    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    dtypes: Sequence[str] = (*(f"{a.name.lower()}->{b.name.lower()}"
                               for a in _CAST_FROM for b in _CAST_TO),
                             *(f"{a.name.lower()}->{b.name.lower()}" for a, b in CAST_BOUNDARY))

    def _io(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor]:
        supported = ("int8, int16, int32, uint32, float32 or bool to int8, int16, int32, "
                     "uint32 or float32 (TFLM's cast.cc); int64 <-> int32 and float64 <-> "
                     "float32 (checked narrowing)")
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            raise refuse(op, "expects 1 input and 1 output", supported)
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        tflm_pair = x.dtype in _CAST_FROM and y.dtype in _CAST_TO
        if not (tflm_pair or (x.dtype, y.dtype) in CAST_BOUNDARY) \
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
    """DIV as TFLM's div.cc takes it: float32, int32 (unquantised, truncating) and int8
    (reference DivElementwise: the multiplier of ``s1 / (s2 * s_out)``, computed in
    float32 as TFLM's Prepare does, then QuantizeMultiplier in double)."""

    headers: Sequence[str] = ("nnrt/kernels/math.h",)
    checks: Sequence[KernelCheck] = (
        *BinaryLowering.checks,
        KernelCheck(("nnrt_div_s8",), "nnrt_div_s8_check", "nnrt/kernels/math.h"))
    wide: Mapping[str, Mapping[DType, str]] = {"DIV": {DType.INT32: RANGE}}

    def check(self, graph: Graph, op: Op) -> None:
        if self._wide(graph, op) is not None:
            return
        a, b, out = _operands(graph, op)
        if any(t.dtype != out.dtype for t in (a, b)) or out.dtype not in (DType.FLOAT32,
                                                                          DType.INT8):
            raise UnsupportedError(
                f"op {op.index} (DIV): {tensor_desc(out)} of "
                f"{a.dtype.name.lower()} / {b.dtype.name.lower()}",
                hint="DIV of float32, int8 (per-tensor quantised) or int32 tensors, the "
                "same for both inputs and the output (TFLM's div.cc)")
        super().check(graph, op)

    def params_s8(self, op: Op, a: Tensor, b: Tensor, out: Tensor) -> dict[str, Any]:
        s1, z1 = per_tensor_quant(op, a)
        s2, z2 = per_tensor_quant(op, b)
        so, zo = per_tensor_quant(op, out)
        lo, hi = act_range_s8(op, _activation(op), out)
        real = float(np.float32(s1) / (np.float32(s2) * np.float32(so)))
        m, sh = quantize_multiplier(real)
        if not -31 <= sh <= 21:
            raise refuse(op, f"the output multiplier {real:g} (shift {sh}) is outside the "
                         "kernel's range", "int8 DIV with s1 / (s2 * s_out) in [2^-32, 2^21)")
        return {"input1_offset": -z1, "input2_offset": -z2, "output_multiplier": m,
                "output_shift": sh, "output_offset": zo, "act_min": lo, "act_max": hi}

    @staticmethod
    def param_type(op: Op, int8: bool) -> str | None:
        return "nnrt_mul_s8_params_t" if int8 else "nnrt_binary_f32_params_t"


UNARY_MATH = UnaryMathLowering()
DIV = DivLowering()
CAST = CastLowering()
FLOOR_DIV_MOD = FloorDivModLowering()
