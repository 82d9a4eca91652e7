"""ELU -> ``nnrt_elu_f32`` / ``nnrt_table_lookup_s8`` (``nnrt/kernels/activation.h``).

float32: TFLM's reference Elu, ``x < 0 ? expm1f(x) : x``. int8: TFLM's ``elu.cc``
builds a 256-entry table in Prepare (``PopulateLookupTable``) from the float transform
``x < 0 ? expf(x) - 1 : x``; :func:`elu_table` builds the same table here in the same
float32 steps (dequantise, transform, multiply by ``1 / output_scale``, round half away
from zero, add the zero point, clamp), and the kernel looks every element up.
"""

from __future__ import annotations

import math

import numpy as np

from ..arith import libm_expf
from ..ir import Op, Tensor
from .common import per_tensor_quant
from .table_unary import TableUnaryLowering

_F32 = np.float32
_SUPPORTED = "int8 -> int8 (per-tensor) or float32 -> float32"


_EXPF = libm_expf()


def _round_half_away(v: np.float32) -> np.float32:
    return _F32(math.floor(abs(float(v)) + 0.5) * (1 if v >= 0 else -1))


def elu_table(op: Op, x: Tensor, y: Tensor) -> np.ndarray:
    """TFLM's ELU lookup table, indexed by the input byte read as unsigned."""
    s_in, z_in = per_tensor_quant(op, x)
    s_out, z_out = per_tensor_quant(op, y)
    inverse = _F32(1.0) / _F32(s_out)
    by_value = []
    for v in range(-128, 128):
        d = _F32(s_in) * _F32(v - z_in)
        t = _F32(_F32(_EXPF(float(d))) - _F32(1.0)) if d < 0 else d
        r = _round_half_away(_F32(t * inverse))
        q = int(_F32(r + _F32(z_out)))  # static_cast<int32_t> truncates
        by_value.append(min(max(q, -128), 127))
    arr = np.asarray(by_value, dtype=np.int8)
    return np.concatenate([arr[128:], arr[:128]])


ELU = TableUnaryLowering("nnrt_elu_f32", elu_table, ("nnrt/kernels/activation.h",),
                        _SUPPORTED)
