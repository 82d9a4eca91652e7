"""What nnopt supports, operator by operator: the registry's definitions
(:mod:`nnopt.ops`) joined with the element types their lowerings accept
(:func:`nnopt.ops.accepted_dtypes`), and (:func:`dtype_table`) with what TFLM's kernels
take (each definition's ``tflm``: :class:`nnopt.ops.base.TflmKernel`). Read by ``nnopt
ops``; nothing here is written by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ops import DEFINITIONS, accepted_dtypes, registered_opcodes
from .ops.base import NO_KERNEL


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


# ----- the dtype table: nnopt's types against TFLM's kernels (docs/operators.md) -----

@dataclass(frozen=True)
class DtypeRow:
    """One builtin: the types TFLM's kernel takes, those nnopt takes, and each type TFLM
    takes that nnopt refuses with the reason."""

    opcode: str
    source: str | None  # TFLM's kernel file (None: no kernel in that TFLM)
    tflm: tuple[str, ...]
    nnopt: tuple[str, ...]  # input types (the registry's, "a->b" cut to "a")
    refused: tuple[tuple[str, str], ...]  # (type, reason)
    blob: bool


def input_types(opcode: str) -> tuple[str, ...]:
    """The input element types nnopt accepts for the opcode, in first-seen order."""
    return tuple(dict.fromkeys(d.split("->")[0] for d in accepted_dtypes(opcode)))


#: TFLM builtins that are no operator of nnopt's: the frontend takes them
#: (:mod:`nnopt.frontend.control_flow`, :mod:`nnopt.frontend.variables`).
INLINED = {
    "IF": "inlined: both branches run, SELECT_V2 picks the outputs",
    "WHILE": "unrolled when the trip count folds at compile time",
    "CALL_ONCE": "its initialisation subgraph becomes the variables' initial state",
    "VAR_HANDLE": "the resource becomes a state tensor",
}


def dtype_table() -> list[DtypeRow]:
    """Every operator nnopt defines, sorted, with what TFLM's kernel takes (its
    definition's ``tflm``)."""
    rows = []
    for code, d in sorted(DEFINITIONS.items()):
        k = d.tflm
        assert k is not None, f"{code} has no TFLM audit (OpDef.tflm)"
        rows.append(DtypeRow(code, k.source, k.dtypes, input_types(code),
                             tuple(sorted(k.refused.items())), d.blob))
    return rows


def _cell(types: tuple[str, ...]) -> str:
    return ", ".join(types) if types else "-"


def dtype_table_markdown() -> str:
    """The table of docs/operators.md (``nnopt ops --markdown`` prints it)."""
    lines = ["| operator | TFLM kernel | TFLM's types | nnopt's types | model blob | "
             "refused (reason) |", "|---|---|---|---|---|---|"]
    for r in dtype_table():
        src = f"`{r.source}`" if r.source else f"none ({NO_KERNEL})"
        refused = "; ".join(f"{t}: {why}" for t, why in r.refused) or "-"
        lines.append(f"| {r.opcode} | {src} | {_cell(r.tflm)} | {_cell(r.nnopt)} | "
                     f"{'yes' if r.blob else 'no'} | {refused} |")
    lines += ["", "TFLM builtins that are not operators of nnopt's (the frontend takes "
              "them):", ""]
    lines += [f"- {code}: {what}" for code, what in sorted(INLINED.items())]
    return "\n".join(lines) + "\n"
