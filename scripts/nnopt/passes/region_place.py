"""Activations over every RAM region (issue 39): when one arena does not fit the board's
arena region, place each buffer (a root tensor with its aliases, or an op's scratch) in
one of several RAM regions, one arena per region, each planned by the ordinary arena
strategies (:func:`nnopt.passes.arena.plan_arena`, its public entry).

A pure pass: :func:`place_regions` takes the buffers of a plan (lifetimes over the
schedule) and the regions with their capacities, fastest first, the home region (the
board's ``arena_region``) last or anywhere, and returns a :class:`RegionPlan` or None
when no placement fits.

Algorithm:

- **Feasibility first (peak-driven).** Every buffer starts in the home region. While the
  home region's live sum (aligned bytes of the buffers live at a schedule step) exceeds
  its capacity, the step with the largest live sum is taken and, among its buffers not
  yet moved, the one that the fastest other region still holds (its own live sum stays
  within capacity) moves there: the hottest first (most reads and writes per byte: see
  :func:`heat`), then the largest. No movable buffer: no placement.
- **Hot buffers in the fastest region.** Then the remaining buffers, hottest first, move
  to a faster region while its live sum stays within capacity (they shorten the
  accesses of the ops that read them most).
- **Arenas.** Each region's buffers are planned by ``plan_arena``; a region whose arena
  exceeds its capacity (fragmentation above the live sum) gives back its most recently
  added hot buffers until it fits, and the home arena is planned again. The result is
  checked: every region's arena within its capacity.

Models whose single arena fits the home region never reach this pass: their plans stay
as they were, byte for byte (the planner calls it only on overflow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..ir import Graph
from .arena import ArenaPlan, plan_arena
from .lifetimes import Buffer

#: Bytes of every other activation region kept free of the activations: NNRT_DTCM data
#: (the kernels' small tables) and the staging buffers of streamed weights
#: (nnopt.swap.placement takes what the region's arena leaves).
REGION_RESERVE_BYTES = 8 * 1024


@dataclass(frozen=True)
class RegionCapacity:
    name: str
    capacity: int  # bytes the region's arena may take
    bandwidth_bytes_per_s: float = 0.0  # its speed (the board data): the order


@dataclass(frozen=True)
class RegionPlan:
    home: str
    region_of: Mapping[str, str]  # buffer key -> region name
    arenas: Mapping[str, ArenaPlan]  # region name -> its arena (home included)

    def bytes_of(self, region: str) -> int:
        a = self.arenas.get(region)
        return a.arena_bytes if a is not None else 0


def heat(graph: Graph | None, b: Buffer) -> float:
    """Accesses per byte of a buffer per inference: its tensor written once and read by
    each consumer (scratch: written and read by its op, counted as 2)."""
    if b.tensor is None or graph is None:
        return 2.0
    readers = {c for t in (b.tensor, *b.aliases) for c in graph.consumers.get(t, ())}
    return 1.0 + len(readers)


def _aligned(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def _profile(bufs: Sequence[Buffer], n: int, align: int) -> list[int]:
    prof = [0] * n
    for b in bufs:
        s = _aligned(b.size, align)
        for i in range(b.first, b.last + 1):
            prof[i] += s
    return prof


def place_regions(buffers: Sequence[Buffer], regions: Sequence[RegionCapacity], home: str,
                  *, graph: Graph | None = None, align: int = 16,
                  strategies: Sequence[str] | None = None) -> RegionPlan | None:
    """Place buffers over ``regions`` (see the module doc); None if nothing fits."""
    if not buffers:
        return None
    caps = {r.name: r.capacity for r in regions}
    if home not in caps:
        raise ValueError(f"home region {home!r} not among {list(caps)}")
    fast = [r.name for r in sorted(regions, key=lambda r: -r.bandwidth_bytes_per_s)
            if r.name != home and r.capacity > 0]
    n = max(b.last for b in buffers) + 1
    where: dict[str, str] = {b.key: home for b in buffers}
    hot = {b.key: heat(graph, b) for b in buffers}
    prof = {r: [0] * n for r in caps}
    prof[home] = _profile(buffers, n, align)

    def members(region: str) -> list[Buffer]:
        return [b for b in buffers if where[b.key] == region]

    def fits(b: Buffer, r: str) -> bool:
        s = _aligned(b.size, align)
        return all(prof[r][i] + s <= caps[r] for i in range(b.first, b.last + 1))

    def move(b: Buffer, r: str) -> None:
        s = _aligned(b.size, align)
        for i in range(b.first, b.last + 1):
            prof[where[b.key]][i] -= s
            prof[r][i] += s
        where[b.key] = r

    # feasibility: relieve the home region's peak step by step
    while True:
        peak = max(prof[home], default=0)
        if peak <= caps[home]:
            break
        step = prof[home].index(peak)
        live = sorted((b for b in buffers if where[b.key] == home and b.first <= step <= b.last),
                      key=lambda b: (-hot[b.key], -b.size, b.key))
        target = next(((b, r) for b in live for r in fast if fits(b, r)), None)
        if target is None:
            return None
        move(*target)
    # hot buffers into the fastest regions while they fit
    added: dict[str, list[Buffer]] = {r: [] for r in fast}
    for b in sorted(buffers, key=lambda b: (-hot[b.key], b.size, b.key)):
        if where[b.key] != home:
            continue
        r = next((r for r in fast if fits(b, r)), None)
        if r is not None:
            move(b, r)
            added[r].append(b)
    # arenas; give back hot additions where fragmentation overflows a region
    arenas: dict[str, ArenaPlan] = {}
    for r in fast:
        while True:
            bufs = members(r)
            if not bufs:
                break
            a = plan_arena(bufs, align=align, strategies=strategies)
            if a.arena_bytes <= caps[r]:
                arenas[r] = a
                break
            if not added[r]:
                return None
            move(added[r].pop(), home)
    home_bufs = members(home)
    if home_bufs:
        a = plan_arena(home_bufs, align=align, strategies=strategies)
        if a.arena_bytes > caps[home]:
            return None
        arenas[home] = a
    return RegionPlan(home, dict(where), arenas)
