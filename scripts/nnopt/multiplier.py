"""Fixed-point helpers shared by the lowerings: TFLM's multiplier encoding."""

from __future__ import annotations

import math


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``real`` as (int32 multiplier in Q31, shift), TFLM's ``QuantizeMultiplier``.

    real == multiplier * 2**shift / 2**31 with multiplier in [2**30, 2**31) or 0.
    """
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = math.floor(abs(q) * (1 << 31) + 0.5) * (1 if q >= 0 else -1)
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q_fixed = 0
    # TFLM saturates shift > 30 only in its single-rounding build; the tflite-micro
    # package (the oracle) uses double rounding, where a shift of 31 stays.
    return q_fixed, shift
