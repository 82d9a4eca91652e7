"""How bench_firmware.py's tables write a figure: counts with thousands separators,
ratios with two decimals (bold above 1: nnopt slower), verdicts, "-" for none."""

from __future__ import annotations


def _n(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _r(a: int | None, b: int | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def _f(x: float | None, bold_above_1: bool = False) -> str:
    if x is None:
        return "-"
    return f"**{x:.2f}**" if bold_above_1 and x > 1 else f"{x:.2f}"


def _exact(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "**no**")
