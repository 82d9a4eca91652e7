"""The operator registry: one definition (:class:`~nnopt.ops.base.OpDef`) per TFLite
operator nnopt supports, one module per family, named by the family map
(:mod:`.families`: ``conv``, ``pool``, ``fc`` … ``detection``, the
TFLite_Detection_PostProcess custom op), which also names the family's lowering
modules, C kernels, headers and tests.

The frontend reads an op's options with its definition's reader; passes ask its traits
(:func:`definition`), never its opcode. Adding an operator = its definition here, its
lowering in :mod:`nnopt.lowering`, its kernel and header in ``modules/nnrt``, its tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ..errors import UnsupportedError
from ..ir import Op
from .base import OpDef
from .families import FAMILIES

# the family modules, in the family map's order (nnopt.ops.families)
_FAMILIES = tuple(importlib.import_module(f"{__name__}.{name}") for name in FAMILIES)

DEFINITIONS: Mapping[str, OpDef] = {d.opcode: d for f in _FAMILIES for d in f.DEFINITIONS}

# Every TFLite operator nnopt can plan and run (builtins, and custom ops by custom code).
SUPPORTED_OPS: frozenset[str] = frozenset(DEFINITIONS)


def definition(op: Op | str) -> OpDef:
    """The definition of an op (or opcode); UnsupportedError for one nnopt lacks."""
    code = op if isinstance(op, str) else op.opcode
    d = DEFINITIONS.get(code)
    if d is None:
        raise UnsupportedError(f"operator {code} is not supported",
                               hint=f"supported operators: {supported_list()}")
    return d


def known(op: Op) -> OpDef | None:
    """The op's definition, or None for an opcode nnopt does not know."""
    return DEFINITIONS.get(op.opcode)


def supported_list() -> str:
    return ", ".join(sorted(SUPPORTED_OPS))
