"""The handler table: ONNX op type -> the function that imports it, and which op types
can be imported as int8 ops in QDQ graphs (with the positions of their data inputs)."""

from __future__ import annotations

from collections.abc import Callable

from ..importer import Handler

HANDLERS: dict[str, Handler] = {}
QUANT_INPUTS: dict[str, tuple[int, ...]] = {}  # (-1,): every input


def handler(*names: str, quant: tuple[int, ...] | None = None) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
            if quant is not None:
                QUANT_INPUTS[n] = quant
        return fn
    return deco
