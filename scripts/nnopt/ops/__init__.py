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
from collections.abc import Mapping, Sequence

from ..errors import UnsupportedError
from ..ir import Graph, Op
from ..lowering.base import Lowering
from .base import BandForm, OpDef, Spatial
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


# The look-ups of a lowering by opcode: the registry's, since each definition holds
# its lowering (nnopt.lowering imports no definition).

def lowering_for(op: Op) -> Lowering:
    """The lowering of the op's definition; UnsupportedError for an opcode nnopt lacks."""
    return definition(op).lowering


def registered_opcodes() -> list[str]:
    """Every opcode with a lowering (every defined one), sorted."""
    return sorted(DEFINITIONS)


def accepted_dtypes(opcode: str) -> tuple[str, ...]:
    """The element types the opcode's lowering accepts, as its lowering declares them
    (``dtypes``, or ``dtypes_by_opcode`` where one lowering serves opcodes that differ):
    "int8", or "int8->int16" where the output type differs from the input's. Empty for
    an opcode without a lowering or a lowering that declares none."""
    d = DEFINITIONS.get(opcode)
    if d is None:
        return ()
    low = d.lowering
    per_op: Mapping[str, Sequence[str]] | None = getattr(low, "dtypes_by_opcode", None)
    if per_op is not None and opcode in per_op:
        return tuple(per_op[opcode])
    return tuple(getattr(low, "dtypes", ()))


def check_graph(graph: Graph) -> None:
    """Raise UnsupportedError listing every op the runtime cannot execute."""
    problems: list[str] = []
    hints: list[str] = []
    for op in graph.ops:
        try:
            lowering_for(op).check(graph, op)
        except UnsupportedError as err:
            problems.append(err.message)
            if err.hint and err.hint not in hints:
                hints.append(err.hint)
    if problems:
        raise UnsupportedError(
            "the model cannot be compiled: " + "; ".join(problems[:10])
            + (f"; and {len(problems) - 10} more" if len(problems) > 10 else ""),
            hint="; ".join(hints[:3]) if hints
            else "operators with kernels: " + ", ".join(registered_opcodes()),
        )


# ----- access patterns, from the definitions (passes.regions re-exports them) -----

def _is_4d_batch1(graph: Graph, t: int) -> bool:
    shape = graph.tensors[t].shape
    return len(shape) == 4 and shape[0] == 1


def _nhwc(graph: Graph, op: Op) -> OpDef | None:
    """The op's definition when it is a batch-1 NHWC op (one output), else None."""
    d = known(op)
    if d is None or len(op.outputs) != 1 or not _is_4d_batch1(graph, op.outputs[0]):
        return None
    acts = graph.activations(op)
    if not acts or not all(_is_4d_batch1(graph, t) for t in acts):
        return None
    return d


def spatial_of(graph: Graph, op: Op) -> Spatial | None:
    """The op's spatial access pattern, or None if it is not a batch-1 NHWC op whose
    output rows depend on a bounded band of input rows."""
    d = _nhwc(graph, op)
    return d.spatial(graph, op) if d is not None else None


def band_of(graph: Graph, op: Op) -> BandForm | None:
    """How the op runs in row bands (``passes.fm_bands``): its definition's ``band``
    form (broadcast binary ops, global pools and means, resizes, transposed
    convolutions), else its spatial pattern; None when it has neither (batch-1 NHWC
    ops only)."""
    d = _nhwc(graph, op)
    if d is None:
        return None
    form = d.band(graph, op) if d.band is not None else None
    if form is not None:
        return form
    sp = d.spatial(graph, op)
    return BandForm.of_spatial(sp) if sp is not None else None
