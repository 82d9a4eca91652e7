"""A kernel call as data: what a window lowering (``lowering.conv``, ``lowering.pool``)
returns for callers that run the op on sub-views (``codegen.views`` bands, slices and
folded padding; ``codegen.stages`` patches). They change its geometry (``fields[
geom_key]``) or its pointers and render it with :func:`render`; they never rebuild
its parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KernelCall:
    """One kernel: its parameter struct type and values, function, pointer arguments."""

    ptype: str
    fields: dict[str, Any]  # values as lowering.elementwise.c_value renders them
    fn: str
    elem: str  # C element type of input/output
    weights: tuple[str, ...]  # extra pointer arguments between input and output
    geom_key: str  # name of the geometry member ("geom")
    scratch: tuple[str, ...] = ()  # trailing scratch argument of the variant, if any


def render(k: KernelCall, params: str, x: str, y: str) -> str:
    """The C call of ``k`` with parameters ``params`` (an address) on pointers x, y."""
    return f"{k.fn}({', '.join([params, x, *k.weights, y, *k.scratch])})"
