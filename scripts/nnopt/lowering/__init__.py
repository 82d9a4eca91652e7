"""Per-operator lowering: from an IR op to a checked call of an nnrt C kernel.

Each operator family lives in one module of this package (``conv.py``, ``pool.py`` …)
and defines :class:`~.base.Lowering` objects (module constants, ``conv.CONV``); each
operator's definition holds its lowering (``OpDef.lowering``, :mod:`nnopt.ops`), so
:func:`lowering_for` is a look-up of the definition. Lowerings derive from
:class:`~.base.LoweringBase` (no headers, no checks, no scratch by default). The code
generator owns everything else (files, arena, weights, the API); a lowering only:

- ``check(graph, op)``: raise :class:`~nnopt.errors.UnsupportedError` for a variant it
  cannot run (dtype combination, option), naming op, tensor and what is supported.
  Called at plan time, before any code is written.
- ``scratch_bytes(graph, op)``: bytes of scratch memory the kernel needs (0 if none),
  from the kernel's ``*_get_buffer_size()`` rule; the planner reserves it in the arena
  for the op's lifetime.
- ``checks``: the exported argument checks (``nnrt_*_check()``,
  :class:`.call.KernelCheck`) of the kernels it calls, which the generated
  ``<model>_prepare()`` runs once on the op's parameters.
- ``emit(ctx)``: the body of ``static nnrt_status_t op_<k>(void)`` as data
  (:data:`.call.Body`: parameter structs and the kernel call, see :mod:`.call`), built
  with ``c_params(ctype, fields)`` and ``c_call(fn, args)`` (``lowering.elementwise``).
  ``ctx.ptr(t)`` is any tensor's data pointer (activation in the arena or constant
  array, :class:`.call.TensorArg`), ``ctx.const_array(...)`` names extra constant data
  (per-channel multipliers …), ``ctx.scratch`` is the scratch buffer. Kernel headers
  the body needs are named in ``headers``. Where ``ctx.specialize`` allows it, a
  lowering may add file-scope functions with ``ctx.decl`` (a kernel body specialised to
  the op, :mod:`.specialize`) and call them from the op body.

The model emitter writes a body as C with :func:`.call.render`; the model-blob writer
encodes the same objects. Window lowerings (``conv``, ``pool``) also give their call
(``window_call(ctx, geom, ...)`` -> :class:`.call.KernelCall`) to the code that runs
the op on sub-views (``codegen.views``, ``codegen.stages``); ``ConvLowering.spec_core``
declares the op's specialised matrix core for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import UnsupportedError
from ..ir import Graph, Op
from .base import EmitContext, Lowering, LoweringBase

# The operator definitions (nnopt.ops) import this package's family modules to hold
# their lowerings, so the look-ups below import nnopt.ops when called, not here.

__all__ = ["EmitContext", "Lowering", "LoweringBase", "accepted_dtypes", "check_graph",
           "lowering_for", "registered_opcodes"]


def lowering_for(op: Op) -> Lowering:
    """The lowering of the op's definition; UnsupportedError for an opcode nnopt lacks."""
    from ..ops import definition
    return definition(op).lowering


def registered_opcodes() -> list[str]:
    """Every opcode with a lowering (every defined one), sorted."""
    from ..ops import DEFINITIONS
    return sorted(DEFINITIONS)


def accepted_dtypes(opcode: str) -> tuple[str, ...]:
    """The element types the opcode's lowering accepts, as its lowering declares them
    (``dtypes``, or ``dtypes_by_opcode`` where one lowering serves opcodes that differ):
    "int8", or "int8->int16" where the output type differs from the input's. Empty for
    an opcode without a lowering or a lowering that declares none."""
    from ..ops import DEFINITIONS
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
