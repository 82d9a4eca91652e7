"""What nnopt supports, operator by operator: the registry's definitions
(:mod:`nnopt.ops`) joined with the element types their lowerings accept
(:func:`nnopt.ops.accepted_dtypes`). Read by ``nnopt ops``; nothing here is
written by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ops import DEFINITIONS, accepted_dtypes, registered_opcodes


@dataclass(frozen=True)
class OperatorInfo:
    opcode: str
    dtypes: tuple[str, ...]  # "int8", or "int8->int16" where the output type differs
    elementwise: str | None  # "unary" / "binary": may run in place over a dying input
    alias: bool  # planned as an alias of its input (no copy)
    window: str | None  # "conv" / "depthwise" / "pool"
    blob: bool  # the runtime-loaded model blob carries it
    custom: bool = False  # a TFLite custom op (operator code CUSTOM), named by its code

    def to_json(self) -> dict[str, Any]:
        return {"opcode": self.opcode, "dtypes": list(self.dtypes),
                "elementwise": self.elementwise, "alias": self.alias, "window": self.window,
                "blob": self.blob, "custom": self.custom}


def supported_operators() -> list[OperatorInfo]:
    """Every operator nnopt can plan and generate code for, sorted by opcode."""
    lowered = set(registered_opcodes())
    return [OperatorInfo(code, accepted_dtypes(code), d.elementwise, d.alias, d.window,
                         d.blob, d.custom)
            for code, d in sorted(DEFINITIONS.items()) if code in lowered]
