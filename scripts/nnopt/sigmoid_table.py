"""The 256-entry unsigned Q0.16 sigmoid table of the int16 LOGISTIC and TANH kernels
(and of the int8 LSTM's gates), computed from its definition, and the C file that
carries it (``modules/nnrt/kernels/activation/nnrt_sigmoid_table_u16.c``).

The kernels interpolate linearly between entries ``i`` and ``i + 1``, the sigmoid
sampled every ``h = 1/24``. A chord between two samples sags below (or rises above)
the curve by ``s''(x) h^2 / 8`` at its midpoint; an entry lowered by half that sag,
``s(x) - s''(x) h^2 / 16``, spreads the interpolation error evenly on both sides of
the curve. Entry ``i < 255`` is that value at ``x = i h`` in units of 2^-16, rounded
to nearest; entry 255 is the saturated maximum 65535. TFLM's kernels use a table
with the same values: the tests run every int16 input through nnopt's int16
LOGISTIC and TANH and compare with the tflite-micro interpreter.

Regenerate the C file with ``python -m nnopt.sigmoid_table modules/nnrt/kernels/activation``
(:mod:`nnopt.rom_table` writes it); a test checks that the committed file equals this
module's output.
"""

from __future__ import annotations

import math
import sys

from . import rom_table
from .rom_table import RomTable

#: Entries and step of the table: sigmoid(i / 24) for i in 0..255.
ENTRIES = 256
STEP = 1.0 / 24.0
C_NAME = "nnrt_sigmoid_table_u16"
GENERATOR = "nnopt.sigmoid_table"


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def midpoint_corrected(x: float, h: float = STEP) -> float:
    """s(x) - s''(x) h^2 / 16, with s'' = s (1 - s) (1 - 2 s)."""
    s = _logistic(x)
    return s - s * (1.0 - s) * (1.0 - 2.0 * s) * h * h / 16.0


def sigmoid_table_u16() -> list[int]:
    """The table: round(65536 * midpoint_corrected(i h)) for i < 255, then 65535."""
    table = [math.floor(65536.0 * midpoint_corrected(i * STEP) + 0.5)
             for i in range(ENTRIES - 1)]
    return [*table, 0xFFFF]


def tables() -> tuple[RomTable, ...]:
    """The table as :mod:`nnopt.rom_table` writes it (declared in nnrt/kernels/activation.h)."""
    return (RomTable(
        name=C_NAME, c_type="uint16_t", values=sigmoid_table_u16(),
        about=("do not edit. sigmoid(i / 24) in units of 2^-16, each entry lowered by half the",
               "sag of the chord to the next one (s - s'' h^2 / 16, h = 1/24), the last one the",
               "saturated maximum; the int16 LOGISTIC / TANH kernels interpolate between entries."),
        header="nnrt/kernels/activation.h", per_row=8, value_format="{:5d}u"),)


def render_c() -> str:
    """The C source defining the table."""
    return rom_table.render_c(tables()[0], GENERATOR)


if __name__ == "__main__":
    raise SystemExit(rom_table.main(GENERATOR, tables, sys.argv[1:]))
