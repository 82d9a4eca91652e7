"""The two 513-entry int16 tables of the int16 -> int16 SOFTMAX kernel, exp(x) on
[-10, 0] and 1 / (1 + x) on [0, 1], computed as TFLM's softmax Prepare computes them
(``LUTPopulate<int16_t>`` of tensorflow/lite/kernels/internal/common.h, called by
``CalculateSoftmaxParams``), and the C files that carry them, one per table named after
it (``modules/nnrt/kernels/softmax/nnrt_softmax_s16_exp_table.c``,
``nnrt_softmax_s16_recip_table.c``).

TFLM fills the tables in Prepare from constants alone (input scales 10/65535 and 1/65535,
output scale 2/65535), so they are the same for every model: nnrt keeps them in ROM.
Each entry is built in the same float32 steps: 512 samples of the function over the
input range, each lowered by half the error of the linear interpolation at the midpoint
(``bias``), rounded half away from zero, clamped to int16; entry 512 the function at the
end of the range. The exp is the C library's expf (:func:`nnopt.arith.libm_expf`, the
one TFLM's ``std::exp(float)`` calls); the tests run int16 softmaxes through nnopt and
the tflite-micro interpreter and compare.

Regenerate the C files with ``python -m nnopt.softmax_table modules/nnrt/kernels/softmax``;
a test checks that the committed files equal this module's output.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np

from . import rom_table
from .arith import INT16_MAX, INT16_MIN, libm_expf
from .rom_table import RomTable

ENTRIES = 513  # 512 steps and the end point (the kernel's slope reads entry i + 1)
EXP_NAME = "nnrt_softmax_s16_exp_table"
RECIP_NAME = "nnrt_softmax_s16_recip_table"
GENERATOR = "nnopt.softmax_table"
_F32 = np.float32
_RANGE = INT16_MAX - INT16_MIN  # 65535, TFLM's `range`


def _round(v: np.float32) -> np.float32:
    """TfLiteRound (std::round on float): nearest, ties away from zero."""
    return _F32(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))


def lut_populate_s16(fn: Callable[[np.float32], np.float32], input_scale: np.float32,
                     input_zero_point: int, output_scale: np.float32,
                     output_zero_point: int) -> list[int]:
    """TFLM's ``detail::LUTPopulateInt16<float>``, step by step in float32."""
    input_min = _F32(input_scale * _F32(INT16_MIN - input_zero_point))
    input_max = _F32(input_scale * _F32(INT16_MAX - input_zero_point))
    output_min = _F32(output_scale * _F32(INT16_MIN - output_zero_point))
    output_max = _F32(output_scale * _F32(INT16_MAX - output_zero_point))
    steps = ENTRIES - 1
    step = _F32((input_max - input_min) / _F32(steps))
    half_step = _F32(step / _F32(2))
    inv = _F32(_F32(_RANGE + 1) / _F32(output_max - output_min))
    lut = []
    for i in range(steps):
        at = _F32(input_min + _F32(_F32(i) * step))
        val = fn(at)
        val_mid = fn(_F32(at + half_step))
        val_next = fn(_F32(input_min + _F32(_F32(i + 1) * step)))
        sample = _round(_F32(val * inv))
        interp = _round(_F32(_F32(_F32(val_next * inv) + _round(_F32(val * inv))) / _F32(2)))
        mid = _round(_F32(val_mid * inv))
        bias = _round(_F32(_F32(interp - mid) / _F32(2)))
        lut.append(int(min(max(float(_F32(sample - bias)), INT16_MIN), INT16_MAX)))
    last = _round(_F32(fn(input_max) * inv))
    lut.append(int(min(max(float(last), INT16_MIN), INT16_MAX)))
    return lut


def softmax_tables() -> tuple[list[int], list[int]]:
    """(exp table, 1 / (1 + x) table) as TFLM's ``InitializeLutForInt16`` fills them."""
    expf = libm_expf()
    exp_table = lut_populate_s16(lambda v: _F32(expf(float(v))), _F32(_F32(10.0) / _F32(_RANGE)),
                                 INT16_MAX, _F32(_F32(2.0) / _F32(_RANGE)), 0)
    recip_table = lut_populate_s16(lambda v: _F32(_F32(1.0) / _F32(_F32(1.0) + v)),
                                   _F32(_F32(1.0) / _F32(_RANGE)), INT16_MIN,
                                   _F32(_F32(2.0) / _F32(_RANGE)), 0)
    return exp_table, recip_table


_WHAT = {EXP_NAME: "exp(x) for x in [-10, 0]", RECIP_NAME: "1 / (1 + x) for x in [0, 1]"}


def tables() -> tuple[RomTable, ...]:
    """The two tables as :mod:`nnopt.rom_table` writes them (declared in
    nnrt/kernels/softmax.h)."""
    exp_table, recip_table = softmax_tables()
    return tuple(RomTable(
        name=name, c_type="int16_t", values=values,
        about=("do not edit. A table of the int16 SOFTMAX as TFLM's softmax Prepare fills it",
               f"(LUTPopulate<int16_t>): {_WHAT[name]}, 512 steps and the end",
               "point, Q0.15; the kernel interpolates between entries i and i + 1."),
        header="nnrt/kernels/softmax.h", per_row=10, value_format="{:6d}")
        for name, values in ((EXP_NAME, exp_table), (RECIP_NAME, recip_table)))


def render_c() -> dict[str, str]:
    """The C sources defining the tables, by file name."""
    return {t.file_name: rom_table.render_c(t, GENERATOR) for t in tables()}


if __name__ == "__main__":
    raise SystemExit(rom_table.main(GENERATOR, tables, sys.argv[1:]))
