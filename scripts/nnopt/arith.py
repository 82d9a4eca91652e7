"""TFLM's build-time arithmetic, written once: what every operator definition, lowering
and pass that needs it calls.

- :func:`out_size_and_padding` and :func:`window_axis` (``ComputePaddingHeightWidth``):
  the output extent and leading padding of one spatial axis of a window op;
- :func:`activation_range_int8` (``CalculateActivationRangeQuantized``) and
  :func:`activation_range_float` (``CalculateActivationRange<float>``) of the fused
  activations, and :func:`bounded_below` (whether one clamps from below);
- :func:`round_half_away` (``TfLiteRound``) and :func:`quantize_value` (TFLM's
  ``Quantize``: the division in float32);
- :func:`align` (round up to a multiple);
- :func:`libm_expf`: the C library's expf, which TFLM's ``std::exp(float)`` calls.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
INT8_MIN, INT8_MAX = -128, 127
INT16_MIN, INT16_MAX = -32768, 32767

#: TFLite's ``ActivationFunctionType`` names, by enum value.
ACTIVATION_NAMES: tuple[str, ...] = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH",
                                     "SIGN_BIT")
#: The fused activations the kernels clamp to (the others are refused).
FUSED_ACTIVATIONS: tuple[str, ...] = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
#: The real range each fused activation clamps to (None: unbounded on that side).
ACTIVATION_REAL: dict[str, tuple[float | None, float | None]] = {
    "RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0),
    "NONE": (None, None)}


def align(x: int, a: int) -> int:
    """x rounded up to a multiple of a."""
    return (x + a - 1) // a * a


def round_half_away(x: float) -> int:
    """``TfLiteRound`` / ``std::round``: half away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_value(scale: float, zero_point: int, value: float) -> int:
    """TFLM: zero_point + (int32)TfLiteRound(f / scale), the division in float32."""
    q = np.float32(value) / np.float32(scale)
    return zero_point + round_half_away(float(q))


def _activation_range_quantized(activation: str, scale: float, zero_point: int,
                                qmin: int, qmax: int) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized`` for an output of the range [qmin, qmax]."""
    lo_real, hi_real = ACTIVATION_REAL.get(activation, (None, None))
    lo = qmin if lo_real is None else max(qmin, quantize_value(scale, zero_point, lo_real))
    hi = qmax if hi_real is None else min(qmax, quantize_value(scale, zero_point, hi_real))
    return lo, hi


def activation_range_int8(activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized`` for an int8 output tensor."""
    return _activation_range_quantized(activation, scale, zero_point, INT8_MIN, INT8_MAX)


def activation_range_int16(activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized`` for an int16 output tensor."""
    return _activation_range_quantized(activation, scale, zero_point, INT16_MIN, INT16_MAX)


def activation_range_float(activation: str) -> tuple[float, float]:
    """``CalculateActivationRange<float>``: NONE clamps to [-FLT_MAX, FLT_MAX]."""
    lo_real, hi_real = ACTIVATION_REAL.get(activation, (None, None))
    return (-FLT_MAX if lo_real is None else lo_real), (FLT_MAX if hi_real is None
                                                         else hi_real)


def activation_range_int32(activation: str) -> tuple[int, int]:
    """``CalculateActivationRange<int32_t>``: the real bounds as integers, NONE the
    whole int32 range."""
    lo_real, hi_real = ACTIVATION_REAL.get(activation, (None, None))
    return (-(1 << 31) if lo_real is None else int(lo_real)), (
        (1 << 31) - 1 if hi_real is None else int(hi_real))


def bounded_below(activation: str) -> bool:
    """True for a fused activation that clamps from below (RELU, RELU6, RELU_N1_TO_1)."""
    return ACTIVATION_REAL.get(activation, (None, None))[0] is not None


def out_size_and_padding(padding: str, size: int, filt: int, stride: int,
                         dilation: int) -> tuple[int, int]:
    """TFLM's output size and leading padding of one spatial axis."""
    eff = (filt - 1) * dilation + 1
    out = (size + stride - 1) // stride if padding == "SAME" else (size + stride - eff) // stride
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a window op: input extent, output extent and the window."""

    size: int  # input extent
    out: int  # output extent
    kernel: int  # effective window extent: (k - 1) * dilation + 1 (1 for point-wise)
    stride: int
    pad: int  # leading implicit padding (>= 0)

    def span(self, a: int, b: int) -> tuple[int, int]:
        """Input range [lo, hi) read by outputs [a, b), clipped to the input (empty if
        every window lies in the padding)."""
        if b <= a:
            return 0, 0
        lo = max(0, a * self.stride - self.pad)
        hi = min(self.size, (b - 1) * self.stride - self.pad + self.kernel)
        return lo, max(lo, hi)

    def pad_local(self, a: int, lo: int) -> int:
        """Leading padding of the window of output a when the input starts at lo."""
        return lo - (a * self.stride - self.pad)


def window_axis(size: int, filt: int, stride: int, dilation: int, padding: str,
                explicit: tuple[int, int] | None) -> Axis:
    """The axis of a window op as TFLM computes output size and leading padding
    (``explicit``: the (before, after) padding PAD folding left)."""
    eff = (filt - 1) * dilation + 1
    if explicit is not None:
        before, after = explicit
        return Axis(size, (size + before + after - eff) // stride + 1, eff, stride, before)
    if padding == "SAME":
        out, pad = out_size_and_padding(padding, size, eff, stride, 1)
        return Axis(size, out, eff, stride, pad)
    return Axis(size, (size + stride - eff) // stride, eff, stride, 0)


def libm_expf() -> Callable[[float], float]:
    """The C library's expf (the one TFLM's std::exp(float) calls on this host), else
    exp in double rounded to float32."""
    name = ctypes.util.find_library("m")
    if name is not None:
        try:
            fn = ctypes.CDLL(name).expf
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
            return lambda v: float(fn(v))
        except (OSError, AttributeError):
            pass
    return lambda v: float(np.float32(math.exp(v)))
