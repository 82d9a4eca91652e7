"""The dynamic allocator's schedule and its cost, predicted from the Plan.

With ``--allocator dynamic`` the runtime does not use the planned offsets: every buffer
of the Plan gets a handle of nnrt's defragmenting allocator (``nnrt/alloc.h``,
Liberis & Lane 2019), and the generated ``invoke()`` (or the model loader) runs:

- before the first op: allocate the graph inputs (the application fills them);
- before each op: allocate the root buffers it produces (in tensor order), then its
  scratch, each at the end of the live block (aliases and in-place outputs use their
  root's handle: no allocation);
- after each op but the last: free the buffers whose last use it was (and its
  scratch), then compact: live blocks move down over the gaps, in address order
  (after the last op nothing moves: the outputs stay for the application and the
  next inference starts from an empty arena).

``lazy=True`` ("dynamic-lazy") frees after each op but compacts only when an
allocation does not fit at the end of the live block (``nnrt_dyn_alloc`` does it
then). The arena is the same bound (an allocation that does not fit after the gaps
are closed would exceed the live peak), blocks that die before the next compaction
are never moved: 30-70 % fewer bytes moved on the shared models.

So before op *i* the arena holds exactly the buffers live at *i*: the allocator's
high-water mark is the live-sum peak of the schedule with each size padded to the
alignment, whatever the lifetimes look like (no fragmentation). The price is the
bytes moved by compaction, which this module predicts by running :class:`DynArena`,
a model of the C allocator, over the same event sequence the code generator emits.
Nothing is recomputed from the graph: lifetimes and sizes come from the Plan.

Not optimal: the order of allocations within one step (tensor order) and the
"new blocks at the end" rule are fixed; a long-lived buffer allocated late is moved
down once per gap that opens beneath it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..arith import align
from ..errors import PlanError
from ..ir import Graph
from ..plan import Plan

# The dynamic plan's types (and ALLOCATORS, DYN_*) are data the planned model carries:
# nnopt.planfacts, imported from there.
from ..planfacts import DynamicPlan, DynBlock, DynStep

__all__ = ["DynArena", "aligned_live_peak", "dynamic_plan", "summary_lines"]


class DynArena:
    """A model of ``nnrt/alloc.h``: same placement, same moves, same counters.

    ``capacity`` None means unbounded (to measure what a schedule needs). Methods
    return the C status values: 0, -1 (ERR_ARG), -6 (ERR_NOMEM)."""

    def __init__(self, n_handles: int, capacity: int | None = None, align: int = 16) -> None:
        self.align = align
        self.capacity = None if capacity is None else capacity // align * align
        self.offset: list[int | None] = [None] * n_handles
        self.size = [0] * n_handles
        self.order: list[int] = []  # live handles by address
        self.top = 0
        self.live_bytes = 0
        self.high_water = 0
        self.compactions = 0
        self.bytes_moved = 0

    def alloc(self, h: int, size: int) -> int:
        if not 0 <= h < len(self.offset) or self.offset[h] is not None:
            return -1
        need = align(size, self.align)
        if self.capacity is not None:
            if size > self.capacity or need > self.capacity - self.live_bytes:
                return -6
            if need > self.capacity - self.top:
                self.compact()
        self.offset[h] = self.top
        self.size[h] = size
        self.order.append(h)
        self.top += need
        self.live_bytes += need
        self.high_water = max(self.high_water, self.top)
        return 0

    def free(self, h: int) -> int:
        if not 0 <= h < len(self.offset) or self.offset[h] is None:
            return -1
        was_last = self.order[-1] == h
        self.order.remove(h)
        self.live_bytes -= align(self.size[h], self.align)
        self.offset[h] = None
        self.size[h] = 0
        if was_last:
            if self.order:
                last = self.order[-1]
                off = self.offset[last]
                assert off is not None
                self.top = off + align(self.size[last], self.align)
            else:
                self.top = 0
        return 0

    def compact(self) -> int:
        cursor = moved = 0
        for h in self.order:
            if self.offset[h] != cursor:
                moved += self.size[h]
                self.offset[h] = cursor
            cursor += align(self.size[h], self.align)
        self.top = cursor
        if moved:
            self.compactions += 1
            self.bytes_moved += moved
        return moved


def aligned_live_peak(plan: Plan) -> int:
    """Max over schedule positions of the live buffers' and scratch sizes, each padded
    to the plan's alignment: the bound the dynamic allocator reaches."""
    n = len(plan.schedule)
    prof = [0] * max(n, 1)
    for b in plan.buffers:
        if b.alias_of is None:
            for i in range(b.first, b.last + 1):
                prof[i] += align(b.size, plan.alignment)
    for s in plan.scratch:
        prof[s.position] += align(s.size, plan.alignment)
    return max(prof)


def dynamic_plan(graph: Graph, plan: Plan, lazy: bool = False) -> DynamicPlan:
    """The event sequence of the dynamic mode for ``plan`` and its predicted cost.

    ``graph`` is the planned graph (``PlannedModel.graph``); only its inputs are read.
    Plans that place buffers over each other beyond whole-tensor aliases (in-place
    window ops, partial overlaps, tiled stages: static-plan techniques) are refused."""
    static_only = [name for name in ("overlaps", "inplace_ops", "stages")
                   if getattr(plan, name, ())]
    if static_only:
        raise PlanError(
            "the dynamic allocator moves whole tensors; this plan uses "
            + ", ".join(static_only).replace("_", " ") + " (static-plan techniques)",
            hint="plan with inplace_ops='off' and tiling='off' (the CLI does so with "
                 "--allocator dynamic)")
    roots = [b for b in plan.buffers if b.alias_of is None]
    blocks: list[DynBlock] = []
    handle_of: dict[int, int] = {}
    for b in sorted(roots, key=lambda e: e.tensor):
        handle_of[b.tensor] = len(blocks)
        blocks.append(DynBlock(len(blocks), b.size, b.first, b.last, tensor=b.tensor))
    for b in plan.buffers:
        if b.alias_of is not None:
            handle_of[b.tensor] = handle_of[b.alias_of]
    scratch_handle: dict[int, int] = {}
    for s in sorted(plan.scratch, key=lambda e: e.op):
        scratch_handle[s.op] = len(blocks)
        blocks.append(DynBlock(len(blocks), s.size, s.position, s.position, scratch_of=s.op))
    if len(blocks) > 0xFFFF:
        raise PlanError(f"the dynamic allocator has 65535 handles; the plan needs "
                        f"{len(blocks)}", hint="use --allocator static")
    try:
        prologue = tuple(dict.fromkeys(handle_of[t] for t in graph.inputs))
    except KeyError as err:
        raise PlanError(f"graph input {err.args[0]} has no buffer in the plan") from None

    allocs: dict[int, list[int]] = {}
    frees: dict[int, list[int]] = {}
    in_prologue = set(prologue)
    for blk in blocks:
        if blk.handle not in in_prologue:
            allocs.setdefault(blk.first, []).append(blk.handle)
        frees.setdefault(blk.last, []).append(blk.handle)

    expect = aligned_live_peak(plan) if plan.schedule else 0
    arena = DynArena(len(blocks), expect if lazy else None, plan.alignment)
    for h in prologue:
        arena.alloc(h, blocks[h].size)
    steps: list[DynStep] = []
    for i, op in enumerate(plan.schedule):
        # Roots in tensor order, then scratch (allocated last, freed first: no move).
        here = sorted(allocs.get(i, []), key=lambda h: (blocks[h].tensor is None, h))
        before = arena.bytes_moved
        for h in here:
            if arena.alloc(h, blocks[h].size) != 0:  # pragma: no cover - invariant
                raise PlanError(f"dynamic allocator model: no room for handle {h} at step {i}")
        live = arena.live_bytes
        dead = tuple(sorted(frees.get(i, [])))
        if i == len(plan.schedule) - 1:
            dead = ()  # the outputs stay for the application; the next inference resets
        for h in dead:
            arena.free(h)
        compact = bool(dead) and not lazy
        if compact:
            arena.compact()
        steps.append(DynStep(i, op, tuple(here), dead, arena.bytes_moved - before, live,
                             compact))
    if plan.schedule and max(s.top_bytes for s in steps) != expect:  # pragma: no cover
        raise PlanError(f"dynamic allocator model: live peak {max(s.top_bytes for s in steps)}"
                        f" bytes, the aligned live peak is {expect}")
    return DynamicPlan(tuple(blocks), prologue, tuple(steps), handle_of, scratch_handle,
                       expect, arena.bytes_moved, arena.compactions, plan.alignment,
                       arena.high_water, lazy)


def summary_lines(dyn: DynamicPlan, static_arena: int) -> Sequence[str]:
    """Report lines for the dynamic mode, next to the static plan's arena."""
    diff = static_arena - dyn.arena_bytes
    when = "when an allocation needs room" if dyn.lazy else "after every op"
    return [
        f"dynamic allocator:  arena {dyn.arena_bytes:,} bytes (aligned live-sum peak; "
        f"static plan {static_arena:,}, "
        + (f"{diff:,} bytes less)" if diff > 0 else "the same)" if diff == 0
           else f"{-diff:,} bytes more)"),
        f"                    {dyn.bytes_moved:,} bytes moved per inference in "
        f"{dyn.compactions} compactions ({when}); handle tables {dyn.table_bytes} bytes",
    ]
