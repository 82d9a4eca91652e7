"""RSQRT: float32 -> ``nnrt_rsqrt_f32``; int8 -> ``nnrt_rsqrt_s8`` over a 256-entry
table (``nnrt/kernels/math.h``).

int8 follows TFLM's ``elementwise.cc`` (RsqrtEvalQuantized) exactly, evaluated here for
every input byte: ``value = x - zp_in``; 0 gives 127; otherwise gemmlowp's
``GetInvSqrtQuantizedMultiplierExp(value, -1)`` (Newton-Raphson in Q3 fixed point),
``MultiplyByQuantizedMultiplier(1, m, shift + 20)``, then the output multiplier
``1 / (sqrt(s_in) * s_out)`` (double) with shift - 20, plus zp_out, clamped. An input
below the input zero point is an error in TFLM ("Rsqrt is only defined for positive
values"): the kernel returns NNRT_ERR_ARG for it as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..cdefs import DType
from ..ir import Graph, Op
from ..quantize import quantize_multiplier
from . import EmitContext, register
from .activation import check_io
from .elementwise import c_call, per_tensor_quant
from .math_f32 import UnaryMathLowering

_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def _wrap32(x: int) -> int:
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def _srdhm(a: int, b: int) -> int:
    if a == b == _I32_MIN:
        return _I32_MAX
    ab = a * b
    n = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    return n // (1 << 31) if n >= 0 else -((-n) // (1 << 31))


def _rdbp(x: int, e: int) -> int:
    mask = (1 << e) - 1
    return (x >> e) + (1 if (x & mask) > (mask >> 1) + (1 if x < 0 else 0) else 0)


def _sat_shl(x: int, e: int) -> int:
    thr = (1 << (31 - e)) - 1
    return _I32_MAX if x > thr else (_I32_MIN if x < -thr else x << e)


def _mbqm(x: int, m: int, shift: int) -> int:
    return _rdbp(_srdhm(_wrap32(x << max(shift, 0)), m), max(-shift, 0))


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """gemmlowp/TFLM GetInvSqrtQuantizedMultiplierExp(value, reverse_shift=-1)."""
    if value <= 1:
        return _I32_MAX, 0
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    pairs = ((32 - value.bit_length()) - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    x_in = value >> 1                      # F3 raw
    half_in = _rdbp(x_in, 1)
    half_three = (1 << 28) + (1 << 27)     # 1.5 in F3
    x = 1 << 28                            # 1.0 in F3
    for _ in range(5):
        x3 = _sat_shl(_srdhm(_srdhm(x, x), x), 6)          # Rescale<3>(x*x*x), F9 -> F3
        x = _sat_shl(_wrap32(_srdhm(half_three, x) - _srdhm(half_in, x3)), 3)
    x = _srdhm(x, 1518500250)              # * sqrt(2)/2 in F0
    if shift < 0:
        x = _wrap32(x << -shift)
        shift = 0
    return x, -shift


def rsqrt_table(s_in: float, z_in: int, s_out: float, z_out: int) -> np.ndarray:
    """The int8 output for every input byte (index = byte as unsigned)."""
    m, sh = quantize_multiplier(1.0 / (math.sqrt(float(s_in)) * float(s_out)))
    out = np.zeros(256, dtype=np.int8)
    for q in range(-128, 128):
        v = q - z_in
        if v <= 0:
            r = 127 if v == 0 else 0
        else:
            im, ish = inv_sqrt_multiplier(v)
            data = _mbqm(1, im, ish + 20)
            r = max(-128, min(127, _mbqm(data, m, sh - 20) + z_out))
        out[q & 0xFF] = r
    return out


class RsqrtLowering(UnaryMathLowering):
    headers: Sequence[str] = ("nnrt/kernels/math.h",)

    def check(self, graph: Graph, op: Op) -> None:
        x, y = check_io(graph, op, ((DType.FLOAT32, DType.FLOAT32), (DType.INT8, DType.INT8)),
                        "RSQRT float32, or int8 quantised per tensor")
        if x.dtype == DType.INT8:
            per_tensor_quant(op, x)
            per_tensor_quant(op, y)

    def emit(self, ctx: EmitContext) -> list[str]:
        x, y = ctx.graph.tensors[ctx.op.inputs[0]], ctx.graph.tensors[ctx.op.outputs[0]]
        if x.dtype == DType.FLOAT32:
            return super().emit(ctx)
        s_in, z_in = per_tensor_quant(ctx.op, x)
        s_out, z_out = per_tensor_quant(ctx.op, y)
        table = ctx.const_array("table", rsqrt_table(s_in, z_in, s_out, z_out))
        return c_call("nnrt_rsqrt_s8", [table, str(z_in), f"(const int8_t *){ctx.ptr(x.index)}",
                                        f"(int8_t *){ctx.ptr(y.index)}", str(x.num_elements)])


register(("RSQRT",), RsqrtLowering())
