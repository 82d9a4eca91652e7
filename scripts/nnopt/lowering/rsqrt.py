"""RSQRT -> ``nnrt_rsqrt_f32`` / ``nnrt_rsqrt_s8`` (``nnrt/kernels/math.h``).

float32: ``1.0f / sqrtf(x)``. int8 (per-tensor): TFLM's ``elementwise.cc``
RsqrtEvalQuantized, for every input value at compile time (:func:`rsqrt_table`):
``x - zp_in`` (0 gives 127), its inverse square root as gemmlowp's Newton iteration in
``GetInvSqrtQuantizedMultiplierExp``, ``MultiplyByQuantizedMultiplier(1, inv, shift +
20)``, then rescaled by ``QuantizeMultiplier(1 / (sqrtf(s_in) * s_out))`` with shift - 20,
plus ``zp_out``, clamped. Inputs below the zero point are a runtime error, as in TFLM.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Op, Tensor
from ..multiplier import quantize_multiplier
from .activation import _rdbp, _sat_mul_pot, _srdhm, _wrap32, multiply_by_quantized_multiplier
from .common import per_tensor_quant, refuse
from .table_unary import TableUnaryLowering

_I32_MAX = 2**31 - 1
_SHIFT = 20  # RsqrtEvalQuantized's kShift


def _a(v: int) -> np.ndarray:
    return np.asarray([v], dtype=np.int64)


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """TFLM's GetInvSqrtQuantizedMultiplierExp(value, kReverseShift = -1)."""
    if value <= 1:
        return _I32_MAX, 0
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    clz = 32 - value.bit_length()
    pairs = (clz - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    x_in = _a(value >> 1)  # F3
    half_input = _rdbp(x_in, 1)  # SaturatingRoundingMultiplyByPOT<-1>
    half_three = (1 << 28) + (1 << 27)  # 1.5 in F3
    x = _a(1 << 28)  # F3::One()
    for _ in range(5):
        x3 = _sat_mul_pot(_srdhm(_srdhm(x, x), x), 6)  # Rescale<3>(F9)
        t = _wrap32(_srdhm(_a(half_three), x) - _srdhm(half_input, x3))  # F6
        x = _sat_mul_pot(t, 3)  # Rescale<3>(F6)
    raw = int(_srdhm(x, 1518500250)[0])  # times sqrt(2)/2 (F0)
    if shift < 0:
        raw = int(_wrap32(_a(raw << -shift))[0])
        shift = 0
    return raw, -shift


def rsqrt_table(op: Op, x: Tensor, y: Tensor) -> np.ndarray:
    """The int8 RSQRT output for inputs -128..127 (those below the zero point unused),
    indexed by the input byte read as unsigned."""
    s_in, z_in = per_tensor_quant(op, x)
    s_out, z_out = per_tensor_quant(op, y)
    f32 = np.float32
    real = 1.0 / float(f32(math.sqrt(f32(s_in))) * f32(s_out))
    m, sh = quantize_multiplier(real)
    if not -31 + _SHIFT <= sh <= 30:
        raise refuse(op, f"the rescale factor {real:g} is out of range",
                     "1 / (sqrt(input scale) * output scale) in [2^-11, 2^30)")
    by_value = []
    for q in range(-128, 128):
        v = q - z_in
        if v < 0:
            by_value.append(0)
            continue
        if v == 0:
            by_value.append(127)
            continue
        inv, ish = inv_sqrt_multiplier(v)
        data = multiply_by_quantized_multiplier(_a(1), inv, ish + _SHIFT)
        out = int(multiply_by_quantized_multiplier(data, m, sh - _SHIFT)[0]) + z_out
        by_value.append(min(max(out, -128), 127))
    arr = np.asarray(by_value, dtype=np.int8)
    return np.concatenate([arr[128:], arr[:128]])


class RsqrtLowering(TableUnaryLowering):
    """The table-unary lowering with RSQRT's kernels (a class of this module: the family
    map finds an op's family by its lowering's module)."""

    def __init__(self) -> None:
        super().__init__("nnrt_rsqrt_f32", rsqrt_table, ("nnrt/kernels/math.h",),
                         "int8 (per-tensor) or float32, input and output alike",
                         s8_kernel="nnrt_rsqrt_s8", s8_zero_point=True)


RSQRT = RsqrtLowering()
