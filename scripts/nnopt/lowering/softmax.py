"""SOFTMAX over the last axis: int8 -> int8, int8 -> int16, int16 -> int16, float32.

Kernels in ``modules/nnrt/include/nnrt/kernels/softmax.h``; parameters from TFLM's
``CalculateSoftmaxParams`` (PreprocessSoftmaxScaling with 5 integer bits, the input
radius as ``diff_min``). TFLM fixes the quantised output: int8 scale exactly 1/256 with
zero point -128, int16 scale 1/65536 (within 0.1 %) with zero point -32768; its Prepare
fails otherwise, and so does :meth:`SoftmaxLowering.check`. int16 -> int16 is TFLM's
table-based variant (``SoftmaxInt16``): zero points 0, output scale 1/32768, the input
difference scaled by ``in_scale * beta / (10 / 65535)`` onto the exp table's [-10, 0];
the tables (:mod:`nnopt.softmax_table`) are the same for every model and live in the
runtime.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..cdefs import DType
from ..ir import Graph, Op, SoftmaxOptions
from ..multiplier import quantize_multiplier
from .activation import c_struct, check_io, scale_of, tensor_desc, zero_point_of
from .base import EmitContext, LoweringBase
from .call import AddressOf, Body, Call, KernelCheck, TensorArg, lit, lit_f32
from .common import refuse

_SUPPORTED = "int8 -> int8, int8 -> int16, int16 -> int16, float32 -> float32"
_SCALED_DIFF_INTEGER_BITS = 5


def _beta(op: Op) -> float:
    return op.options.beta if isinstance(op.options, SoftmaxOptions) else 1.0


def softmax_params(op: Op, x_scale: float, beta: float) -> dict[str, int]:
    """TFLM's PreprocessSoftmaxScaling + CalculateInputRadius (double precision)."""
    real = min(beta * x_scale * float(1 << (31 - _SCALED_DIFF_INTEGER_BITS)),
               float((1 << 31) - 1))
    if not real > 1.0:
        raise refuse(op, f"beta * input scale = {beta * x_scale!r} is too small "
                          "(TFLM requires beta * scale * 2^26 > 1)",
                          "beta * input scale > 2^-26")
    mult, shift = quantize_multiplier(real)
    radius = math.floor(1.0 * ((1 << _SCALED_DIFF_INTEGER_BITS) - 1)
                        * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)) / (1 << shift))
    return {"input_multiplier": mult, "input_left_shift": shift, "diff_min": -radius}


def softmax_s16_params(op: Op, x_scale: float, beta: float) -> dict[str, int]:
    """TFLM's int16 input rescale: QuantizeMultiplier(in_scale * beta / (10 / 65535))."""
    real = float(x_scale) * float(beta) / (10.0 / 65535.0)
    if not real > 0.0:
        raise refuse(op, f"beta * input scale = {float(beta) * float(x_scale)!r} is not "
                     "positive", "beta * input scale > 0")
    mult, shift = quantize_multiplier(real)
    if not -31 <= shift <= 15:
        raise refuse(op, f"beta * input scale = {float(beta) * float(x_scale)!r} scales the "
                     f"input difference by 2^{shift}, outside the kernel's [-31, 15]",
                     "int16 SOFTMAX with beta * input scale in [2^-33, 5)")
    return {"input_multiplier": mult, "input_left_shift": shift}


class SoftmaxLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/softmax.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_softmax_s8", "nnrt_softmax_s8_s16"), "nnrt_softmax_s8_check",
                    "nnrt/kernels/softmax.h", picks=(0, 3, 4)),  # (&params, x, y, rows, depth)
        KernelCheck(("nnrt_softmax_s16",), "nnrt_softmax_s16_check", "nnrt/kernels/softmax.h",
                    picks=(0, 3, 4)),  # (&params, x, y, rows, depth)
        KernelCheck(("nnrt_softmax_f32",), "nnrt_softmax_f32_check", "nnrt/kernels/softmax.h",
                    picks=(3, 4)))  # (beta, x, y, rows, depth)
    dtypes: Sequence[str] = ("int8", "int8->int16", "int16", "float32")

    def check(self, graph: Graph, op: Op) -> None:
        x, y = check_io(graph, op, ((DType.INT8, DType.INT8), (DType.INT8, DType.INT16),
                                    (DType.INT16, DType.INT16),
                                    (DType.FLOAT32, DType.FLOAT32)), _SUPPORTED)
        if x.shape != y.shape or len(x.shape) < 1:
            raise refuse(op, f"input {tensor_desc(x)} shape {list(x.shape)} and "
                              f"output shape {list(y.shape)} differ or are scalars",
                              "equal shapes of rank >= 1")
        if x.dtype == DType.FLOAT32:
            return
        zp, scale = zero_point_of(y), scale_of(y)
        if x.dtype == DType.INT16:
            if zero_point_of(x) != 0 or zp != 0 or not abs(
                    np.float32(scale) - np.float32(1.0 / 32768)) <= np.float32(
                    0.001) * np.float32(1.0 / 32768):
                raise refuse(op, f"{tensor_desc(x)} -> {tensor_desc(y)}: TFLM requires "
                             f"zero points 0 and the output scale 1/32768 (input zero "
                             f"point {zero_point_of(x)}, output {zp}, scale {scale!r})",
                             "int16 softmax with zero points 0, output scale 1/32768")
            softmax_s16_params(op, scale_of(x), _beta(op))
            return
        if y.dtype == DType.INT8 and not (zp == -128 and np.float32(scale) == np.float32(
                1.0 / 256)):
            raise refuse(op, f"int8 output {tensor_desc(y)} has scale {scale!r} and "
                              f"zero point {zp}; TFLM requires exactly 1/256 and -128",
                              "int8 output quantised with scale 1/256, zero point -128")
        if y.dtype == DType.INT16 and not (
                zp == -32768 and abs(np.float32(scale) - np.float32(1.0 / 65536))
                <= np.float32(0.001) * np.float32(1.0 / 65536)):
            raise refuse(op, f"int16 output {tensor_desc(y)} has scale {scale!r} and "
                              f"zero point {zp}; TFLM requires 1/65536 and -32768",
                              "int16 output quantised with scale 1/65536, zero point -32768")
        softmax_params(op, scale_of(x), _beta(op))

    def emit(self, ctx: EmitContext) -> Body:
        g, op = ctx.graph, ctx.op
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        depth = x.shape[-1]
        rows = x.num_elements // depth if depth else 0
        if x.dtype == DType.FLOAT32:
            return [Call("nnrt_softmax_f32", (
                lit_f32(_beta(op)), TensorArg(x.index, "float", True),
                TensorArg(y.index, "float"), lit(rows), lit(depth)), wrap=False)]
        if x.dtype == DType.INT16:
            p16 = softmax_s16_params(op, scale_of(x), _beta(op))
            return [c_struct("nnrt_softmax_s16_params_t", dict(p16)),
                    Call("nnrt_softmax_s16", (AddressOf("params"),
                                              TensorArg(x.index, "int16_t", True),
                                              TensorArg(y.index, "int16_t"), lit(rows),
                                              lit(depth)), wrap=False)]
        p = softmax_params(op, scale_of(x), _beta(op))
        src = TensorArg(x.index, "int8_t", True)
        if y.dtype == DType.INT16:
            fn, dst = "nnrt_softmax_s8_s16", TensorArg(y.index, "int16_t")
        else:
            fn, dst = "nnrt_softmax_s8", TensorArg(y.index, "int8_t")
        return [c_struct("nnrt_softmax_s8_params_t", dict(p)),
                Call(fn, (AddressOf("params"), src, dst, lit(rows), lit(depth)), wrap=False)]


SOFTMAX = SoftmaxLowering()
