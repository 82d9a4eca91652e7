"""What a lowering is (:class:`Lowering`) and what it is given (:class:`EmitContext`).

Every family module of :mod:`nnopt.lowering` defines lowering objects of this shape
(deriving :class:`LoweringBase` for the defaults); the operator definitions
(:mod:`nnopt.ops`) hold them. This module imports nothing of the package but the call
data (:mod:`.call`), so that the definitions can import the family modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..ir import Graph, Op
from .call import Body, KernelCheck, Pointers, ScratchArg, SpecDecl, TensorArg


@dataclass(frozen=True)
class EmitContext:
    graph: Graph
    op: Op
    c_ptr: Callable[[int], str]
    """C expression (``void *``) for the data of tensor index t (activation or constant):
    how the caller renders :class:`.call.TensorArg` (code around calls uses it too)."""
    const_array: Callable[[str, np.ndarray], str]
    """Emit a constant array (C type chosen from the numpy dtype: int8/int16/int32/float)
    named after the op and a suffix; returns the C identifier."""
    c_scratch: str
    """C expression (``void *``) for this op's scratch buffer, or ``NULL`` if none."""
    specialize: str = "off"
    """``--specialize`` mode ("auto", "off", "force"): whether the lowering may emit a
    model-specialised function for this op (:mod:`nnopt.lowering.specialize`)."""
    model: str = "model"
    """C identifier prefix of the generated model (``<model>_spec_op<k>`` functions)."""
    decl: Callable[[SpecDecl], None] | None = None
    """Add a specialised function, as data (:data:`.call.SpecDecl`: code generation
    writes it at file scope, after the weights and constant arrays, before the op
    functions); None where the caller cannot take any (then nothing is specialised)."""
    weight_array: Callable[[int], str | None] = lambda t: None
    """The identifier of constant tensor t's array in the model source, or None (not a
    plain constant there: streamed, a slice ...); specialised functions name it."""
    laid_out_weight: Callable[[int, str, np.ndarray], str | None] = (
        lambda t, layout, arr: None)
    """``laid_out_weight(t, layout, arr)``: constant tensor t's array written as ``arr``
    (its bytes rearranged by the lowering into the layout its kernel reads, named
    ``layout``; the same number of values, of its dtype or int8 widened to int16)
    instead of its own order, once: the model source then
    holds no other copy of t. The identifier, or None where the caller cannot (another
    op reads t, t is streamed or already written, a caller without the hook): then the
    lowering keeps t's own order."""
    weight_layouts: frozenset[str] | None = None
    """The layouts of ``laid_out_weight`` that pay on the target's core
    (:attr:`nnopt.firmware.cores.Core.weight_layouts`, from the plan's board); None: the
    core is not known, every layout may be used."""

    def layout_pays(self, layout: str) -> bool:
        """Whether writing weights in ``layout`` pays on the target core."""
        return self.weight_layouts is None or layout in self.weight_layouts

    def ptr(self, t: int) -> TensorArg:
        """The data pointer of tensor t, as a call argument. The caller's pointer is
        asked for now (a constant's array is declared in the order the lowering names
        its tensors)."""
        self.c_ptr(t)
        return TensorArg(t)

    @property
    def scratch(self) -> ScratchArg:
        """The op's scratch buffer, as a call argument."""
        return ScratchArg()

    @property
    def has_scratch(self) -> bool:
        """Whether the plan gives this op a scratch buffer (a ScratchArg of its calls is
        then never NULL): the fact a kernel variant that needs one may rely on."""
        return self.c_scratch != "NULL"

    @property
    def pointers(self) -> Pointers:
        """How this context's pointers are written (for :func:`.call.render`)."""
        return Pointers(self.c_ptr, self.c_scratch)


@dataclass(frozen=True)
class RowBand:
    """One row band of an op whose feature maps live in storage (``codegen.bands``):
    the emitting context's input and output tensors hold only the band's rows
    (``in_rows`` of the whole input, ``out_rows`` of the whole output); ``in_h`` and
    ``out_h`` are the whole tensors' heights. ``index`` names the band's constants."""

    index: int
    in_h: int
    out_h: int
    in_rows: tuple[int, int]
    out_rows: tuple[int, int]


class Lowering(Protocol):
    headers: Sequence[str]  # e.g. ("nnrt/kernels/conv.h",)
    # the exported argument checks (nnrt_*_check()) of the kernels emit() may call,
    # which the generated <model>_prepare() runs (:func:`.call.prepare_of`)
    checks: Sequence[KernelCheck]
    # Also declared by every lowering (read by accepted_dtypes, listed by `nnopt ops`,
    # tested against check()): dtypes: Sequence[str], the element types check()
    # accepts ("int8", "int8->int16"), or dtypes_by_opcode for a lowering of several
    # opcodes that accept different types.

    def check(self, graph: Graph, op: Op) -> None: ...

    def scratch_bytes(self, graph: Graph, op: Op) -> int: ...

    def emit(self, ctx: EmitContext) -> Body: ...


class LoweringBase:
    """The defaults of a lowering: no headers, no exported checks, no scratch."""

    headers: Sequence[str] = ()
    checks: Sequence[KernelCheck] = ()

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0
