"""Per-operator lowering: from an IR op to a checked call of an nnrt C kernel.

Each operator family lives in one module of this package (``conv.py``, ``pool.py`` …)
and registers a :class:`Lowering` for the opcodes it handles with :func:`register`.
The code generator owns everything else (files, arena, weights, the API); a lowering
only:

- ``check(graph, op)``: raise :class:`~nnopt.errors.UnsupportedError` for a variant it
  cannot run (dtype combination, option), naming op, tensor and what is supported.
  Called at plan time, before any code is written.
- ``scratch_bytes(graph, op)``: bytes of scratch memory the kernel needs (0 if none),
  from the kernel's ``*_get_buffer_size()`` rule; the planner reserves it in the arena
  for the op's lifetime.
- ``emit(ctx)``: the body of ``static nnrt_status_t op_<k>(void)``: C statements ending
  in ``return <status expression>;``. Use ``ctx.ptr(t)`` for any tensor's data pointer
  (activation in the arena or constant array), ``ctx.const_array(...)`` for extra
  constant data (per-channel multipliers …), ``ctx.scratch`` for the scratch pointer.
  Kernel headers the body needs are named in ``headers``. Where ``ctx.specialize``
  allows it, a lowering may add file-scope functions with ``ctx.decl`` (a kernel body
  specialised to the op, :mod:`.specialize`) and call them from the op body.

Window lowerings (``conv``, ``pool``) also give their call as data
(``window_call(ctx, geom, ...)`` -> :class:`.call.KernelCall`) for the code that runs
the op on sub-views (``codegen.views``, ``codegen.stages``); ``ConvLowering.spec_core``
declares the op's specialised matrix core for them. Which module holds an op's
lowering is its definition's ``lowering`` (:mod:`nnopt.ops`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import UnsupportedError
from ..ir import Graph, Op


@dataclass(frozen=True)
class EmitContext:
    graph: Graph
    op: Op
    ptr: Callable[[int], str]
    """C expression (``void *``) for the data of tensor index t (activation or constant)."""
    const_array: Callable[[str, np.ndarray], str]
    """Emit a constant array (C type chosen from the numpy dtype: int8/int16/int32/float)
    named after the op and a suffix; returns the C identifier."""
    scratch: str
    """C expression (``void *``) for this op's scratch buffer, or ``NULL`` if none."""
    specialize: str = "off"
    """``--specialize`` mode ("auto", "off", "force"): whether the lowering may emit a
    model-specialised function for this op (:mod:`nnopt.lowering.specialize`)."""
    model: str = "model"
    """C identifier prefix of the generated model (``<model>_spec_op<k>`` functions)."""
    decl: Callable[[list[str]], None] | None = None
    """Add file-scope C lines (after the weights and constant arrays, before the op
    functions); None where the caller cannot take any (then nothing is specialised)."""


class Lowering(Protocol):
    headers: Sequence[str]  # e.g. ("nnrt/kernels/conv.h",)
    # Also declared by every lowering (read by accepted_dtypes, listed by `nnopt ops`,
    # tested against check()): dtypes: Sequence[str], the element types check()
    # accepts ("int8", "int8->int16"), or dtypes_by_opcode for a lowering of several
    # opcodes that accept different types.

    def check(self, graph: Graph, op: Op) -> None: ...

    def scratch_bytes(self, graph: Graph, op: Op) -> int: ...

    def emit(self, ctx: EmitContext) -> list[str]: ...


_REGISTRY: dict[str, Lowering] = {}
_LOADED = False


def register(opcodes: Sequence[str], lowering: Lowering) -> None:
    for code in opcodes:
        _REGISTRY[code] = lowering


def _load_all() -> None:
    # Import every family module once so that each registers its opcodes (a module
    # imported directly before, e.g. by a test, registers only its own).
    global _LOADED
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    _LOADED = True


def lowering_for(op: Op) -> Lowering:
    if not _LOADED:
        _load_all()
    try:
        return _REGISTRY[op.opcode]
    except KeyError:
        raise UnsupportedError(
            f"op {op.index} ({op.opcode}) has no code generator yet",
            hint="operators with kernels: " + ", ".join(sorted(_REGISTRY)),
        ) from None


def registered_opcodes() -> list[str]:
    """Every opcode with a lowering, sorted."""
    if not _LOADED:
        _load_all()
    return sorted(_REGISTRY)


def accepted_dtypes(opcode: str) -> tuple[str, ...]:
    """The element types the opcode's lowering accepts, as its lowering declares them
    (``dtypes``, or ``dtypes_by_opcode`` where one lowering serves opcodes that differ):
    "int8", or "int8->int16" where the output type differs from the input's. Empty for
    an opcode without a lowering or a lowering that declares none."""
    if not _LOADED:
        _load_all()
    low = _REGISTRY.get(opcode)
    if low is None:
        return ()
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
            else "operators with kernels: " + ", ".join(sorted(_REGISTRY)),
        )
