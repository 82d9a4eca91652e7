"""What the planner decided, as data codegen and the blob writer read: the plan facts.

:func:`nnopt.planner.plan_model` computes them once, from the planned graph and the
Plan (``nnopt.passes.facts``), and records them on the
:class:`~nnopt.planner.PlannedModel` (``PlannedModel.facts``):

- the ops that run as no code, their output stored in their input's buffer (aliases);
- per op its spatial access pattern (:class:`~nnopt.ops.base.Spatial`) and, for window
  ops, the (graph, op) that asks the registered lowering for the kernel variant the
  planned geometry takes (folded padding: an explicitly padded stand-in);
- per op run row by row, the bands of rows (or runs of pixels) one kernel call each may
  produce at the planned offsets;
- the dynamic allocator's plan (:class:`DynamicPlan`), when a dynamic allocator or the
  model blob needs it (:func:`nnopt.planner.with_dynamic` records it, once).

Codegen (``nnopt.codegen``) and the blob writer (``nnopt.blob``) import no pass: they
read these types. Pure data; nothing here computes a plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import PlanError
from .ir import Graph, Op
from .ops.base import WINDOW, Spatial

#: "dynamic": compact after every op (Liberis & Lane); "dynamic-lazy": compact only
#: when an allocation needs the room (same arena bound, fewer bytes moved).
ALLOCATORS: tuple[str, ...] = ("static", "dynamic", "dynamic-lazy")

#: Bytes of the allocator's state (``nnrt_dyn_t``) on a 32-bit target.
DYN_STATE_BYTES = 48
#: Bytes per handle of the caller's tables (``NNRT_DYN_TABLE_BYTES``).
DYN_BYTES_PER_HANDLE = 10


@dataclass(frozen=True)
class DynBlock:
    """One handle: a root tensor buffer (with its aliases) or an op's scratch."""

    handle: int
    size: int
    first: int  # schedule position of its allocation (0 for graph inputs: the prologue)
    last: int  # schedule position after which it is freed
    tensor: int | None = None  # root tensor
    scratch_of: int | None = None  # op index

    @property
    def name(self) -> str:
        """C identifier of the handle in generated code."""
        return f"H_T{self.tensor}" if self.tensor is not None else f"H_S{self.scratch_of}"


@dataclass(frozen=True)
class DynStep:
    position: int
    op: int  # op index
    alloc: tuple[int, ...]  # handles allocated before the op, in this order
    free: tuple[int, ...]  # handles freed after the op (then one compaction)
    moved_bytes: int  # predicted bytes moved (eager: after the op; lazy: by its allocs)
    top_bytes: int  # predicted live bytes (aligned) while the op runs
    compact: bool = True  # the generated code compacts after the op


@dataclass(frozen=True)
class DynamicPlan:
    """What the dynamic mode does and what it costs, for one Plan."""

    blocks: tuple[DynBlock, ...]  # by handle
    prologue: tuple[int, ...]  # handles allocated before the first op (graph inputs)
    steps: tuple[DynStep, ...]
    handle_of: dict[int, int]  # tensor (root or alias) -> handle
    scratch_handle: dict[int, int]  # op index -> handle
    arena_bytes: int  # the arena: aligned live-sum peak (eager: the high-water mark)
    bytes_moved: int  # per inference
    compactions: int  # compactions that moved something, per inference
    alignment: int
    high_water: int = 0  # largest end of the live block (lazy: up to arena_bytes)
    lazy: bool = False

    @property
    def table_bytes(self) -> int:
        """SRAM besides the arena: allocator state and handle tables (32-bit target)."""
        return DYN_STATE_BYTES + DYN_BYTES_PER_HANDLE * len(self.blocks)

    def to_json(self) -> dict[str, object]:
        return {
            "arena_bytes": self.arena_bytes,
            "bytes_moved": self.bytes_moved,
            "compactions": self.compactions,
            "compaction": "lazy" if self.lazy else "after every op",
            "high_water": self.high_water,
            "handles": len(self.blocks),
            "table_bytes": self.table_bytes,
            "alignment": self.alignment,
            "steps": [{"position": s.position, "op": s.op, "top_bytes": s.top_bytes,
                       "moved_bytes": s.moved_bytes} for s in self.steps],
        }

@dataclass(frozen=True)
class Bands:
    """Kernel calls of a row-by-row op: (first, count) in execution order, of output rows
    or (``pixels``) of output pixels."""

    runs: tuple[tuple[int, int], ...]
    pixels: bool


@dataclass(frozen=True)
class PlanFacts:
    """The facts of one planned model that codegen and the blob writer need (op indices
    of the planned graph)."""

    # ops whose output the plan stores in their input's buffer: no code, no blob kernel
    aliased_ops: frozenset[int]
    # op -> its spatial access pattern (batch-1 NHWC ops that have one)
    spatial: Mapping[int, Spatial]
    # window op -> the (graph, op) to ask its lowering for the kernel variant and
    # scratch; None when only the generic kernel fits (a padded 1x1 filter)
    variants: Mapping[int, tuple[Graph, Op] | None]
    # window op run row by row -> its kernel calls; None: one row per call
    bands: Mapping[int, Bands | None]
    # the dynamic allocator's plan (nnopt.planner.with_dynamic); None: not asked for
    dynamic: DynamicPlan | None = None

    def window(self, op: Op, what: str) -> Spatial:
        """The op's window access pattern; PlanError (``what`` it cannot do) without one."""
        sp = self.spatial.get(op.index)
        if sp is None or sp.kind != WINDOW:
            raise PlanError(f"op {op.index} ({op.opcode}) {what}")
        return sp

    def variant(self, op: Op) -> tuple[Graph, Op] | None:
        """The (graph, op) the op's lowering picks its kernel variant for (window ops)."""
        if op.index not in self.variants:
            raise PlanError(f"op {op.index} ({op.opcode}) has no recorded kernel variant")
        return self.variants[op.index]

    def dynamic_for(self, allocator: str) -> DynamicPlan:
        """The dynamic plan of ``allocator`` ("dynamic" or "dynamic-lazy"); PlanError
        when the planned model does not carry it."""
        dyn = self.dynamic
        if dyn is None or dyn.lazy != (allocator == "dynamic-lazy"):
            raise PlanError(f"the planned model carries no dynamic plan for the {allocator} "
                            "allocator",
                            hint="plan it with nnopt.driver.plan (allocator=...), or record "
                            "one with nnopt.planner.with_dynamic")
        return dyn

    def dynamic_events(self) -> DynamicPlan:
        """The dynamic plan of either compaction mode (its handles, allocations and frees
        are the same eagerly or lazily: what the model blob records)."""
        if self.dynamic is None:
            raise PlanError("the planned model carries no dynamic plan",
                            hint="record one with nnopt.planner.with_dynamic")
        return self.dynamic
