"""Per-operator lowering: from an IR op to a checked call of an nnrt C kernel.

Each operator family lives in one module of this package (``conv.py``, ``pool.py`` …)
and defines :class:`~.base.Lowering` objects (module constants, ``conv.CONV``); each
operator's definition holds its lowering (``OpDef.lowering``, :mod:`nnopt.ops`), so
the look-ups by opcode (:func:`nnopt.ops.lowering_for`, :func:`nnopt.ops.check_graph`,
:func:`nnopt.ops.accepted_dtypes`) live with the registry: this package imports no
operator definition. Lowerings derive from
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
  with ``c_params(ctype, fields)`` and ``c_call(fn, args)`` (``lowering.common``).
  ``ctx.ptr(t)`` is any tensor's data pointer (activation in the arena or constant
  array, :class:`.call.TensorArg`), ``ctx.const_array(...)`` names extra constant data
  (per-channel multipliers …), ``ctx.scratch`` is the scratch buffer. Kernel headers
  the body needs are named in ``headers``. Where ``ctx.specialize`` allows it, a
  lowering may give ``ctx.decl`` a specialised function as data (a kernel body
  specialised to the op, :data:`.specialize.SpecDecl`, which ``codegen.spec`` writes)
  and call it from the op body.

The model emitter writes a body as C with :func:`.call.render`; the model-blob writer
encodes the same objects. Window lowerings (``conv``, ``pool``) also give their call
(``window_call(ctx, geom, ...)`` -> :class:`.call.KernelCall`) to the code that runs
the op on sub-views (``codegen.views``, ``codegen.stages``); ``ConvLowering.spec_core``
declares the op's specialised matrix core for them.
"""

from __future__ import annotations

from .base import EmitContext, Lowering, LoweringBase

__all__ = ["EmitContext", "Lowering", "LoweringBase"]
