"""Arena offsets: place every buffer in one arena so that no two live ones overlap.

One registry of strategies with one signature, as TVM's unified static memory planner
keeps its algorithms: :data:`STRATEGIES` maps a name to an :class:`ArenaStrategy`,
whose ``place`` takes an :class:`ArenaRequest` (buffers, alignment, permitted overlaps,
the work budget, a proven lower bound to stop at) and returns the offsets;
:func:`plan_arena` runs the requested ones alike and keeps the smallest plan (ties: the
first in the list). :func:`verify_offsets` checks the plan
kept: two buffers whose lifetimes intersect must not intersect in space.

- ``greedy_by_size`` — TFLM's GreedyMemoryPlanner idea: largest first (ties: higher
  tensor index first, as TFLM), each at the lowest offset that fits between the
  already-placed buffers it overlaps in time. Not optimal: an early large buffer can
  leave a gap nothing refills (vww_96_int8: 73,728 B for a 55,296 B live peak).
- ``greedy_by_lifetime`` — the same first fit, in order of first use (then size):
  good on chains, where it yields a ping-pong-like layout.
- ``two_ended`` — ping-pong (Unlu 2020) generalised: with a target arena size
  (starting at the live-sum peak), buffers in order of first use go to the bottom or
  to the top of the arena, each on the side opposite its producer's input, growing the
  target only when neither side fits. Reaches the live peak on chain-like models.
- ``hill_climb`` — deterministic local search over the placement order of the first
  fit (swap pairs, keep improvements), seeded with the best order above; bounded
  iterations. It is where branched graphs get closest to the live-sum peak.

Scale (issue 18): first fit finds the placed buffers a new one meets in time with a
:class:`~nnopt.passes.intervals.TimeIndex` instead of scanning every placed buffer (the
same decisions, near linear on real graphs); hill climbing and a first fit derived
from a similar run (:func:`first_fit_within`) re-place only the buffers whose earlier
neighbours in time changed, and in turn those next to a buffer that moved
(:func:`_refit`), abandoning a candidate once it exceeds the limit;
:func:`arena_lower_bound` (also with permitted overlaps) lets callers reject a
candidate without placing it, and a :class:`~nnopt.passes.plan_budget.PlanBudget` bounds
the strategies' work (strategies run, hill-climbing swaps tried: counts, not seconds).

Every offset is a multiple of ``align``; sizes are padded to ``align`` when placed.
The live-sum peak (aligned) is a lower bound for every strategy: once a strategy
reaches it, the remaining ones are not run (they are absent from ``candidates``).

Permitted overlaps (:class:`Overlap`, from ``passes.inplace_ops`` and ``passes.tiling``):
an op whose access pattern allows it may write its output over the part of a dying
input it has already consumed (rows or patches processed in order). Each permission
names the two buffers, the schedule positions where both are live, and the safe
offset differences ``off(dst) - off(src)`` (<= ``forward_max`` when processed in
increasing address order, >= ``backward_min`` in decreasing order). The first-fit
strategies place buffers with these relaxed conflicts; :func:`verify_offsets` accepts
an overlap in space and time only when such a permission covers it, and stays strict
for everything else. With permissions the live-sum peak is no longer a lower bound.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import accumulate

from ..arith import align as round_up
from ..errors import PlanError
from .intervals import TimeIndex, lowest_fit, time_neighbours
from .lifetimes import Buffer
from .plan_budget import PlanBudget


@dataclass(frozen=True)
class Overlap:
    """Permission for buffer ``dst`` (written by an op) to share bytes with buffer
    ``src`` (read by it, dead after it), justified by the op's access pattern."""

    src: str  # buffer key of the input
    dst: str  # buffer key of the output
    first: int  # schedule positions in which both may be live: their lifetimes may
    last: int  # intersect only inside [first, last]
    forward_max: int | None  # safe if off(dst) - off(src) <= this (forward order)
    backward_min: int | None  # safe if off(dst) - off(src) >= this (backward order)
    reason: str  # e.g. "op 2 (CONV_2D) row by row"

    def allows(self, delta: int) -> bool:
        return ((self.forward_max is not None and delta <= self.forward_max)
                or (self.backward_min is not None and delta >= self.backward_min))


_NO_OVERLAPS: tuple[Overlap, ...] = ()
_INF = 1 << 62


def _permits(overlaps: Sequence[Overlap]) -> dict[tuple[str, str], Overlap]:
    return {(o.src, o.dst): o for o in overlaps}


def _busy(o: Buffer, off: int, o_size: int, b: Buffer, b_size: int,
          perms: Mapping[tuple[str, str], Overlap], align: int) -> tuple[int, int] | None:
    """The interval [lo, hi) that already-placed buffer o (at off) blocks for b, in
    first-fit form (b's start s conflicts iff s + b_size > lo and s < hi); None if o
    blocks nothing (a permission allows every overlapping position)."""
    lo, hi = off, off + o_size
    p = perms.get((o.key, b.key))
    if p is not None:  # o is the input, b the output: d = s - off
        f = p.forward_max if p.forward_max is not None else -_INF
        r = p.backward_min if p.backward_min is not None else _INF
        lo, hi = off + max(-b_size, f) + b_size, off + min(o_size, r)
    else:
        p = perms.get((b.key, o.key))
        if p is not None:  # b is the input, o the output: delta = off - s
            f = p.forward_max if p.forward_max is not None else -_INF
            r = p.backward_min if p.backward_min is not None else _INF
            lo, hi = max(off - r, off - b_size) + b_size, min(off - f, off + o_size)
    return (lo, round_up(hi, align)) if lo - b_size < hi else None


@dataclass(frozen=True)
class ArenaPlan:
    strategy: str
    offsets: Mapping[str, int]  # buffer key -> byte offset
    arena_bytes: int
    candidates: Mapping[str, int]  # every strategy tried -> arena bytes it reached


@dataclass(frozen=True)
class ArenaRequest:
    """What every arena strategy receives (the one signature of :data:`STRATEGIES`)."""

    buffers: Sequence[Buffer]
    align: int
    overlaps: Sequence[Overlap] = ()
    budget: PlanBudget | None = None  # bounds a search's work (hill climbing's swaps)
    bound: int | None = None  # a proven lower bound a search may stop at (None: its own)


#: ``place(request) -> offsets`` (buffer key -> byte offset), unverified.
Strategy = Callable[[ArenaRequest], dict[str, int]]


def _span(b: Buffer) -> tuple[int, int]:
    return b.first, b.last


def _n_steps(buffers: Sequence[Buffer]) -> int:
    return max((b.last for b in buffers), default=-1) + 1


def _first_fit(order: Sequence[Buffer], align: int,
               overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    """Place buffers in the given order, each at the lowest aligned offset that fits."""
    res = _first_fit_from(order, align, _permits(overlaps))
    assert res is not None
    return res


def _partners(perms: Mapping[tuple[str, str], Overlap]) -> dict[str, set[str]]:
    """Buffer key -> the keys a permission pairs it with (either way)."""
    partners: dict[str, set[str]] = {}
    for src, dst in perms:
        partners.setdefault(src, set()).add(dst)
        partners.setdefault(dst, set()).add(src)
    return partners


def _fit(b: Buffer, size: int, placed: Iterable[tuple[Buffer, int, int]],
         mine: set[str] | None, perms: Mapping[tuple[str, str], Overlap], align: int) -> int:
    """First fit of one buffer: the lowest aligned offset clear of every ``placed``
    (buffer, offset, aligned size) it meets in time; ``mine``: the keys a permission
    pairs ``b`` with."""
    if mine:
        busy = []
        for o, off, o_size in placed:
            if o.key in mine:
                if iv := _busy(o, off, o_size, b, size, perms, align):
                    busy.append(iv)
            elif o_size + size > 0:  # _busy without a permission, inline
                busy.append((off, off + o_size))
    else:  # _busy without a permission: the placed buffer's own bytes
        busy = [(off, off + o_size) for _, off, o_size in placed if o_size + size > 0]
    return lowest_fit(busy, size, align)


def _first_fit_from(order: Sequence[Buffer], align: int,
                    perms: Mapping[tuple[str, str], Overlap], *, start: int = 0,
                    known: Mapping[str, int] | None = None,
                    limit: int | None = None) -> dict[str, int] | None:
    """First fit of ``order``: the first ``start`` buffers at their ``known`` offsets
    (a first fit places a prefix of its order the same whatever follows it), the rest
    each at the lowest aligned offset clear of the placed buffers it meets in time
    (found with a :class:`TimeIndex`, not by scanning them all). With ``limit``: None as
    soon as a buffer would end above it (callers that only keep arenas <= limit)."""
    index: TimeIndex[tuple[Buffer, int, int]] = TimeIndex(_n_steps(order))
    offsets: dict[str, int] = {}
    partners = _partners(perms)
    for k, b in enumerate(order):
        size = round_up(b.size, align)
        if k < start:
            assert known is not None
            cur = known[b.key]
        else:
            cur = _fit(b, size, index.meeting(b.first, b.last), partners.get(b.key), perms,
                       align)
            if limit is not None and cur + size > limit:
                return None
        offsets[b.key] = cur
        index.add((b, cur, size), b.first, b.last)
    return offsets


def _refit(pos: Mapping[str, int], meets: Callable[[Buffer], Sequence[Buffer]],
           offsets: dict[str, int], sizes: Mapping[str, int], seeds: Iterable[Buffer],
           perms: Mapping[tuple[str, str], Overlap], partners: Mapping[str, set[str]],
           align: int, limit: int | None, log: list[tuple[str, int | None]]) -> bool:
    """Turn ``offsets``, the first fit of a similar order or buffer set, into the first
    fit of the order ``pos`` (key -> position), in place, re-placing only what can
    change. A first fit places a buffer by its size, its permissions and the offsets
    of the buffers before it in the order that it meets in time (``meets``); so only
    the ``seeds`` (the caller's: buffers whose earlier neighbours or permissions
    changed, new ones) and, in turn, the later neighbours of every buffer whose offset
    changes are placed again, in the order (a heap of positions). Every changed offset
    is appended to ``log`` as (key, previous offset or None). False as soon as a
    re-placed buffer would end above ``limit`` (``offsets`` then partly updated: the
    caller restores or drops it)."""
    heap: list[tuple[int, Buffer]] = []
    queued: set[str] = set()
    for b in seeds:
        if b.key not in queued:
            queued.add(b.key)
            heap.append((pos[b.key], b))
    heapq.heapify(heap)  # positions are distinct: the buffers are never compared
    while heap:
        p, b = heapq.heappop(heap)
        k = b.key
        size = sizes[k]
        near = meets(b)
        cur = _fit(b, size, [(o, offsets[o.key], sizes[o.key]) for o in near
                             if pos[o.key] < p], partners.get(k), perms, align)
        if limit is not None and cur + size > limit:
            return False
        old = offsets.get(k)
        if cur != old:
            log.append((k, old))
            offsets[k] = cur
            for o in near:
                q = pos[o.key]
                if q > p and o.key not in queued:
                    queued.add(o.key)
                    heapq.heappush(heap, (q, o))
    return True


def arena_size(buffers: Sequence[Buffer], offsets: Mapping[str, int], align: int) -> int:
    """Bytes an arena needs for ``buffers`` at ``offsets`` (each size aligned)."""
    return max((offsets[b.key] + round_up(b.size, align) for b in buffers), default=0)


def _by_size(buffers: Sequence[Buffer]) -> list[Buffer]:
    return sorted(buffers, key=lambda b: (-b.size, -(b.tensor if b.tensor is not None else -1)))


def _by_lifetime(buffers: Sequence[Buffer]) -> list[Buffer]:
    return sorted(buffers, key=lambda b: (b.first, -b.size, b.key))


def greedy_by_size(buffers: Sequence[Buffer], align: int,
                   overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    return _first_fit(_by_size(buffers), align, overlaps)


def greedy_by_lifetime(buffers: Sequence[Buffer], align: int,
                       overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    return _first_fit(_by_lifetime(buffers), align, overlaps)


class _Near:
    """Buffer key -> the buffers it meets in time, for one buffer set: built whole
    (:func:`~nnopt.passes.intervals.time_neighbours`) when first asked, or, for a set
    derived from a similar one, key by key when asked: the parent's list without the
    buffers removed, plus the new ones it meets (a new buffer: a scan of the set). A
    chain of derivations longer than ``_NEAR_DEPTH`` starts over whole."""

    __slots__ = ("_depth", "_lists", "_new", "_new_keys", "_order", "_parent", "_removed")

    def __init__(self, order: Sequence[Buffer], parent: _Near | None = None,
                 removed: frozenset[str] = frozenset(), new: Sequence[Buffer] = ()) -> None:
        self._order = order
        self._depth: int = 0 if parent is None else parent._depth + 1
        if self._depth > _NEAR_DEPTH:
            parent, self._depth = None, 0
        self._parent = parent
        self._removed = removed
        self._new = new
        self._new_keys = frozenset(b.key for b in new)
        self._lists: dict[str, list[Buffer]] | None = None if parent is None else {}

    def __call__(self, b: Buffer) -> list[Buffer]:
        lists = self._lists
        if lists is None:
            near = time_neighbours(self._order, _span)
            self._lists = lists = {o.key: n for o, n in zip(self._order, near, strict=True)}
        hit = lists.get(b.key)
        if hit is None:
            parent = self._parent
            if parent is None or b.key in self._new_keys:
                hit = [o for o in self._order if o.key != b.key and o.first <= b.last
                       and b.first <= o.last]
            else:
                removed = self._removed
                hit = [o for o in parent(b) if o.key not in removed]
                hit += [o for o in self._new if o.key != b.key and o.first <= b.last
                        and b.first <= o.last]
            lists[b.key] = hit
        return hit


_NEAR_DEPTH = 24


@dataclass(frozen=True)
class FirstFitRun:
    """One complete first fit: its order, permissions and offsets, to place a similar
    buffer set from (:func:`first_fit_within`); the neighbour lists and permission
    partners of a run derived from another are derived from that run's."""

    order: tuple[Buffer, ...]
    perms: Mapping[tuple[str, str], Overlap]
    offsets: Mapping[str, int]
    near_from: _Near | None = field(default=None, compare=False, repr=False)
    partners_from: dict[str, set[str]] | None = field(default=None, compare=False,
                                                      repr=False)

    # aligned size of every buffer by key, per alignment (derived runs: from ref's)
    aligned: dict[int, dict[str, int]] = field(default_factory=dict, compare=False,
                                               repr=False)

    def aligned_sizes(self, align: int) -> dict[str, int]:
        sizes = self.aligned.get(align)
        if sizes is None:
            sizes = self.aligned[align] = {b.key: round_up(b.size, align) for b in self.order}
        return sizes

    @cached_property
    def by_key(self) -> dict[str, Buffer]:
        return {b.key: b for b in self.order}

    @cached_property
    def positions(self) -> dict[str, int]:
        return {b.key: i for i, b in enumerate(self.order)}

    @cached_property
    def near(self) -> _Near:
        """The buffers each one meets in time."""
        return self.near_from if self.near_from is not None else _Near(self.order)

    @cached_property
    def partners(self) -> dict[str, set[str]]:
        return self.partners_from if self.partners_from is not None else _partners(self.perms)


def is_first_fit(strategy: str) -> bool:
    """Whether ``strategy`` is one first fit of a sorted order."""
    entry = STRATEGIES.get(strategy)
    return entry is not None and entry.first_fit_order is not None


def first_fit_within(buffers: Sequence[Buffer], limit: int | None, *, align: int = 16,
                     strategy: str, overlaps: Sequence[Overlap] = _NO_OVERLAPS,
                     ref: FirstFitRun | None = None) -> FirstFitRun | None:
    """The first fit of ``strategy`` (:func:`is_first_fit`) if it places ``buffers``
    within ``limit`` bytes (None: any), else None; unverified (as
    :func:`fits_within`). With ``ref``, a run on a similar buffer set: the longest
    prefix of the order that ``ref`` placed the same way (the same buffers in the same
    places of the order, the same permissions among them) keeps ``ref``'s offsets,
    since a first fit places a prefix whatever follows it; the rest is placed anew."""
    sort = STRATEGIES[strategy].first_fit_order
    assert sort is not None, strategy
    order = tuple(sort(buffers))
    perms = _permits(overlaps)
    start = 0
    if ref is not None:
        derived = _derive(order, perms, ref, align, limit)
        if derived is not False:
            assert derived is not True
            return derived
        n = min(len(order), len(ref.order))
        while start < n and order[start] == ref.order[start]:
            start += 1
        if start:
            pos = {b.key: i for i, b in enumerate(order[:start])}
            for pair in perms.keys() ^ ref.perms.keys() | {
                    p for p, o in perms.items() if ref.perms.get(p, o) != o}:
                a, b = pos.get(pair[0]), pos.get(pair[1])
                if a is not None and b is not None:  # both in the prefix: it ends there
                    start = min(start, max(a, b))
        if limit is not None and any(ref.offsets[b.key] + round_up(b.size, align) > limit
                                     for b in order[:start]):
            return None  # the kept prefix already ends above the limit
    offsets = _first_fit_from(order, align, perms, start=start,
                              known=ref.offsets if ref is not None else None, limit=limit)
    return None if offsets is None else FirstFitRun(order, perms, offsets)


def _derive(order: tuple[Buffer, ...], perms: Mapping[tuple[str, str], Overlap],
            ref: FirstFitRun, align: int, limit: int | None) -> FirstFitRun | bool | None:
    """The first fit of ``order`` derived from ``ref`` with :func:`_refit` (None: it
    ends above ``limit``), or False where that does not apply: the buffers both runs
    place (equal in both) are not in the same relative order. Seeds: the buffers new
    or changed since ``ref``, the later neighbours of those it no longer has, and the
    buffers whose permissions changed."""
    rmap = ref.by_key
    nmap: dict[str, Buffer] = {}
    new: list[Buffer] = []
    common: list[str] = []  # keys placed by both, in this order
    for b in order:
        nmap[b.key] = b
        r = rmap.get(b.key)
        if r is b or (r is not None and r == b):
            common.append(b.key)
        else:
            new.append(b)
    kept = set(common)
    if [r.key for r in ref.order if r.key in kept] != common:
        return False
    removed = frozenset(r.key for r in ref.order if r.key not in kept)  # gone or changed
    rnear = ref.near
    rpos = ref.positions
    seeds = list(new)
    for k in removed:
        p = rpos[k]
        seeds += [nmap[o.key] for o in rnear(rmap[k]) if o.key in kept and rpos[o.key] > p]
    rperms = ref.perms
    moved = perms.keys() ^ rperms.keys()  # pairs with a permission in one run only
    partners = ref.partners
    if moved:
        partners = dict(partners)
        for k in {k for pair in moved for k in pair}:
            partners[k] = set(partners.get(k, ()))
        for src, dst in moved:
            if (src, dst) in perms:
                partners[src].add(dst)
                partners[dst].add(src)
            elif (dst, src) not in perms:
                partners[src].discard(dst)
                partners[dst].discard(src)
    changed = moved | {pair for pair, o in perms.items()
                       if (r2 := rperms.get(pair)) is not None and r2 is not o and r2 != o}
    for pair in changed:
        seeds += [nmap[k] for k in pair if k in nmap]
    near = _Near(order, rnear, removed, new)
    offsets = dict(ref.offsets)
    for k in removed:
        del offsets[k]
    pos = {b.key: i for i, b in enumerate(order)}
    sizes = dict(ref.aligned_sizes(align))  # ref's, less the buffers gone, plus the new
    for k in removed:
        del sizes[k]
    for b in new:
        sizes[b.key] = round_up(b.size, align)
    if not _refit(pos, near, offsets, sizes, seeds, perms, partners, align, limit, []):
        return None
    if limit is not None and max((offsets[k] + n for k, n in sizes.items()), default=0) > limit:
        return None
    run = FirstFitRun(order, perms, offsets, near, partners)
    run.aligned[align] = sizes
    return run


def fits_within(buffers: Sequence[Buffer], limit: int, *, align: int = 16,
                strategy: str, overlaps: Sequence[Overlap] = _NO_OVERLAPS,
                budget: PlanBudget | None = None) -> bool:
    """Whether ``strategy`` places ``buffers`` in at most ``limit`` bytes: the same
    answer as ``plan_arena(..., strategies=(strategy,)).arena_bytes <= limit``, cheaper
    for a first-fit strategy (it stops at the first buffer that would end above the
    limit, and the offsets are not verified: a caller keeping the configuration plans
    it for real with :func:`plan_arena`, which verifies)."""
    entry = STRATEGIES.get(strategy)
    sort = entry.first_fit_order if entry is not None else None
    if sort is None:
        plan = plan_arena(buffers, align=align, strategies=(strategy,), overlaps=overlaps,
                          budget=budget)
        return plan.arena_bytes <= limit
    return _first_fit_from(sort(buffers), align, _permits(overlaps), limit=limit) is not None


def _two_ended_at(buffers: Sequence[Buffer], align: int, target: int,
                  overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int] | None:
    order = sorted(buffers, key=lambda b: (b.first, -(b.last - b.first), -b.size, b.key))
    index: TimeIndex[tuple[Buffer, int, int]] = TimeIndex(_n_steps(order))
    dying: dict[int, list[Buffer]] = {}  # position -> placed buffers last used there
    offsets: dict[str, int] = {}
    side_of: dict[str, int] = {}
    perms = _permits(overlaps)
    for b in order:
        size = round_up(b.size, align)
        busy = sorted(iv for o, lo, hi in index.meeting(b.first, b.last)
                      if (iv := _busy(o, lo, hi - lo, b, size, perms, align)))
        # lowest fit from the bottom
        lo_fit = 0
        for lo, hi in busy:
            if lo_fit + size <= lo:
                break
            lo_fit = max(lo_fit, hi)
        # highest fit from the top
        hi_fit: int | None = (target - size) // align * align
        for lo, hi in sorted(busy, key=lambda x: -x[1]):
            assert hi_fit is not None
            if hi_fit >= hi:
                break
            hi_fit = min(hi_fit, (lo - size) // align * align)
        if hi_fit is not None and hi_fit < 0:
            hi_fit = None
        bottom_ok = lo_fit + size <= target
        # prefer the side opposite to the buffers that die as this one is born
        neighbours = dying.get(b.first, [])
        want_top = bool(neighbours) and all(side_of.get(o.key, 0) == 0 for o in neighbours)
        if want_top and hi_fit is not None:
            off, side = hi_fit, 1
        elif bottom_ok:
            off, side = lo_fit, 0
        elif hi_fit is not None:
            off, side = hi_fit, 1
        else:
            return None
        offsets[b.key] = off
        side_of[b.key] = side
        index.add((b, off, off + size), b.first, b.last)
        dying.setdefault(b.last, []).append(b)
    return offsets


def two_ended(buffers: Sequence[Buffer], align: int,
              overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    if not buffers:
        return {}
    n = max(b.last for b in buffers) + 1
    prof = [0] * n
    for b in buffers:
        for i in range(b.first, b.last + 1):
            prof[i] += round_up(b.size, align)
    target = max(prof)
    upper = sum(round_up(b.size, align) for b in buffers)
    step = max(align, target // 64 // align * align)
    while target <= upper:
        res = _two_ended_at(buffers, align, target, overlaps)
        if res is not None:
            return res
        target += step
    return greedy_by_size(buffers, align, overlaps)


def aligned_live_peak(buffers: Sequence[Buffer], align: int) -> int:
    """The live-sum peak with sizes padded to ``align``: no layout can be smaller."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        events.append((b.first, round_up(b.size, align)))
        events.append((b.last + 1, -round_up(b.size, align)))
    peak = cur = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        cur += delta
        peak = max(peak, cur)
    return peak


@lru_cache(maxsize=4096)
def _most_shared(ss: int, sd: int, forward_max: int | None, backward_min: int | None) -> int:
    """The most bytes an output of (aligned) size ``sd`` may share with its input of
    size ``ss`` under a permission (``forward_max``, ``backward_min``: see
    :class:`Overlap`), over every permitted offset difference."""
    def shared(delta: int) -> int:  # off(dst) - off(src) = delta
        return max(0, min(ss, delta + sd) - max(0, delta))
    best = 0
    if forward_max is not None:
        best = shared(min(forward_max, max(0, ss - sd)))
    if backward_min is not None:
        best = max(best, shared(max(backward_min, min(0, ss - sd))))
    return best


def arena_lower_bound(buffers: Sequence[Buffer], align: int,
                      overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> int:
    """No layout is smaller: at every position, the aligned live bytes minus the most
    each permitted overlap live there could share (bytes of a union are at least the
    sum minus the pairwise intersections, and only permitted pairs intersect). Without
    overlaps: the aligned live-sum peak. (:class:`BoundTerms`: the same bound, kept to
    be updated for a buffer set derived from this one.)"""
    if not overlaps:
        return aligned_live_peak(buffers, align)
    return BoundTerms.whole(buffers, align, overlaps).value()


class BoundTerms:
    """The terms of :func:`arena_lower_bound` for one buffer set and its permissions:
    per position, the live aligned bytes minus each live permission's most shared
    bytes (a difference array), and the aligned sizes (the bound is at least the
    largest). :meth:`derive` updates a copy for a buffer set that differs by a few
    buffers and permissions, at the cost of those (the array's prefix maximum is one
    pass in C)."""

    __slots__ = ("_align", "_diff", "_ovs", "_sizes")

    def __init__(self, n_steps: int, align: int) -> None:
        self._align = align
        self._diff = [0] * (n_steps + 1)
        self._sizes: dict[int, int] = {}  # aligned size -> how many buffers
        # id(permission) -> it, first and last position where it saves, bytes saved
        self._ovs: dict[int, tuple[Overlap, int, int, int]] = {}

    @classmethod
    def whole(cls, buffers: Sequence[Buffer], align: int,
              overlaps: Sequence[Overlap]) -> BoundTerms:
        terms = cls(_n_steps(buffers), align)
        for b in buffers:
            terms._buffer(b, 1)
        by_key = {b.key: b for b in buffers}
        for o in overlaps:
            terms._overlap(o, by_key)
        return terms

    def derive(self, removed: Iterable[Buffer], added: Iterable[Buffer],
               ovs_removed: Iterable[Overlap], ovs_added: Iterable[Overlap],
               by_key: Mapping[str, Buffer]) -> BoundTerms:
        """The terms without ``removed`` and ``ovs_removed`` (buffers and permissions
        of this set), with ``added`` and ``ovs_added`` (their buffers in ``by_key``,
        the new set's). Every other permission must name buffers kept as they are."""
        out = BoundTerms(0, self._align)
        out._diff = list(self._diff)
        out._sizes = dict(self._sizes)
        out._ovs = dict(self._ovs)
        for b in removed:
            out._buffer(b, -1)
        for o in ovs_removed:
            term = out._ovs.pop(id(o), None)
            if term is not None:
                _, lo, hi, save = term
                out._diff[lo] += save
                out._diff[hi + 1] -= save
        for b in added:
            out._buffer(b, 1)
        for o in ovs_added:
            out._overlap(o, by_key)
        return out

    def value(self) -> int:
        peak = max(0, max(accumulate(self._diff), default=0))
        return max(peak, max(self._sizes, default=0))  # and the largest buffer

    def _buffer(self, b: Buffer, sign: int) -> None:
        size = round_up(b.size, self._align)
        diff = self._diff
        if b.last + 2 > len(diff):
            diff.extend([0] * (b.last + 2 - len(diff)))
        diff[b.first] += sign * size
        diff[b.last + 1] -= sign * size
        n = self._sizes.get(size, 0) + sign
        if n:
            self._sizes[size] = n
        else:
            del self._sizes[size]

    def _overlap(self, o: Overlap, by_key: Mapping[str, Buffer]) -> None:
        src, dst = by_key.get(o.src), by_key.get(o.dst)
        if src is None or dst is None:
            return
        lo, hi = max(src.first, dst.first, o.first), min(src.last, dst.last, o.last)
        if lo > hi:
            return
        a = self._align
        save = _most_shared(round_up(src.size, a), round_up(dst.size, a),
                            o.forward_max, o.backward_min)
        self._diff[lo] -= save
        self._diff[hi + 1] += save
        self._ovs[id(o)] = (o, lo, hi, save)


def hill_climb(buffers: Sequence[Buffer], align: int,
               overlaps: Sequence[Overlap] = _NO_OVERLAPS, *, iterations: int = 400,
               seed: int = 0, budget: PlanBudget | None = None,
               bound: int | None = None) -> dict[str, int]:
    """Local search over the first fit's placement order (module docstring). A swap
    of positions i < j changes the first fit only where a buffer's earlier neighbours
    in time change: the two swapped ones and their neighbours after i are placed
    again, then (:func:`_refit`) the later neighbours of every buffer that moves, and
    the swap is rejected as soon as one would end above the best arena; the neighbour
    lists are built once (the buffers stay the same, only the order changes). The same
    decisions as re-planning every swap from scratch, at the cost of what changes.
    With a ``budget``: stops when its swaps run out, keeping the best order found. Stops
    at ``bound`` (default: the live-sum peak without overlaps, else none): give only a
    true lower bound (:func:`arena_lower_bound`)."""
    if len(buffers) < 2:
        return _first_fit(list(buffers), align, overlaps)
    perms = _permits(overlaps)
    if bound is None:
        bound = aligned_live_peak(buffers, align) if not overlaps else 0
    starts = [
        sorted(buffers, key=lambda b: (-b.size, b.key)),
        sorted(buffers, key=lambda b: (b.first, -b.size, b.key)),
        sorted(buffers, key=lambda b: (-(b.size * (b.last - b.first + 1)), b.key)),
    ]
    order: list[Buffer] = []
    offsets: dict[str, int] = {}
    best = -1
    for s in starts:
        offs = _first_fit_from(s, align, perms)
        assert offs is not None
        size = arena_size(buffers, offs, align)
        if best < 0 or size < best:
            best, order, offsets = size, list(s), offs
    sizes = {b.key: round_up(b.size, align) for b in buffers}
    partners = _partners(perms)
    near = _Near(buffers)
    pos = {b.key: i for i, b in enumerate(order)}
    at_top = sum(1 for k, off in offsets.items() if off + sizes[k] == best)  # end at best
    rng = random.Random(seed)
    n = len(order)
    for it in range(iterations):
        if best <= bound:
            break
        if budget is not None and it % 8 == 0:
            budget.step("arena hill climbing", it, iterations)
            if not budget.spend("arena hill climbing", min(8, iterations - it)):
                break
        i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        x, y = order[i], order[j]
        order[i], order[j] = y, x
        pos[x.key], pos[y.key] = j, i
        lo = min(i, j)
        seeds = [x, y, *(o for o in near(x) if pos[o.key] > lo),
                 *(o for o in near(y) if pos[o.key] > lo)]
        log: list[tuple[str, int | None]] = []
        if not _refit(pos, near, offsets, sizes, seeds, perms, partners, align, best, log):
            for k, old in reversed(log):  # above the best arena: rejected, undone
                assert old is not None
                offsets[k] = old
            order[i], order[j] = x, y
            pos[x.key], pos[y.key] = i, j
            continue
        # every buffer ends within the best arena: kept (the old search's size <= best)
        for k, old in log:
            assert old is not None
            at_top += (offsets[k] + sizes[k] == best) - (old + sizes[k] == best)
        if not at_top:  # nothing ends at the best arena any more: smaller
            best = max(off + sizes[k] for k, off in offsets.items())
            at_top = sum(1 for k, off in offsets.items() if off + sizes[k] == best)
    return offsets


@dataclass(frozen=True)
class ArenaStrategy:
    """An entry of the registry: its name, how it places, and for a strategy that is
    one first fit of a sorted order, that order (which callers may run incrementally:
    :func:`first_fit_within`, :func:`fits_within`)."""

    name: str
    place: Strategy
    first_fit_order: Callable[[Sequence[Buffer]], list[Buffer]] | None = None


#: Every arena strategy, in the order :func:`plan_arena` tries them.
STRATEGIES: Mapping[str, ArenaStrategy] = {s.name: s for s in (
    ArenaStrategy("greedy_by_size",
                  lambda r: greedy_by_size(r.buffers, r.align, r.overlaps), _by_size),
    ArenaStrategy("greedy_by_lifetime",
                  lambda r: greedy_by_lifetime(r.buffers, r.align, r.overlaps), _by_lifetime),
    ArenaStrategy("two_ended", lambda r: two_ended(r.buffers, r.align, r.overlaps)),
    ArenaStrategy("hill_climb", lambda r: hill_climb(r.buffers, r.align, r.overlaps,
                                                     budget=r.budget, bound=r.bound)),
)}


def verify_offsets(buffers: Sequence[Buffer], offsets: Mapping[str, int], align: int,
                   arena_bytes: int, overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> None:
    """Raise PlanError if two buffers live at the same time share a byte, or if any
    buffer is misaligned or outside the arena.

    The only exception: a pair covered by a permitted :class:`Overlap` whose offset
    difference is one the permission allows and whose lifetimes intersect only inside
    the permission's positions (the input dies where the output is born)."""
    perms = _permits(overlaps)
    for b in buffers:
        off = offsets.get(b.key)
        if off is None:
            raise PlanError(f"buffer {b.key} has no offset")
        if off % align:
            raise PlanError(f"buffer {b.key} at offset {off} is not {align}-byte aligned")
        if off < 0 or off + b.size > arena_bytes:
            raise PlanError(f"buffer {b.key} [{off}, {off + b.size}) outside the arena "
                            f"of {arena_bytes} bytes")
    # Every pair live at the same time meets at the later first use of the two: check
    # each buffer against those live where it starts (a TimeIndex, not every pair).
    rank = {b.key: i for i, b in enumerate(sorted(buffers, key=lambda b: offsets[b.key]))}
    index: TimeIndex[Buffer] = TimeIndex(_n_steps(buffers))
    for b in sorted(buffers, key=lambda b: (b.first, b.key)):
        index.add(b, b.first, b.last)
    for b in buffers:
        if not b.size:
            continue
        b_lo = offsets[b.key]
        b_hi = b_lo + b.size
        for a in index.live_at(b.first):
            if a is b or not a.size or (a.first == b.first and a.key > b.key):
                continue  # same-step pairs: checked once, from the greater key
            a_lo = offsets[a.key]
            a_hi = a_lo + a.size
            if b_lo < a_hi and a_lo < b_hi:
                x, y = (a, b) if rank[a.key] < rank[b.key] else (b, a)  # lower offset first
                if _permitted(x, y, offsets, perms):
                    continue
                raise PlanError(f"buffers {a.key} and {b.key} overlap in space "
                                f"[{a_lo},{a_hi}) / [{b_lo},{b_hi}) and in time")


def _permitted(a: Buffer, b: Buffer, offsets: Mapping[str, int],
               perms: Mapping[tuple[str, str], Overlap]) -> bool:
    for src, dst in ((a, b), (b, a)):
        p = perms.get((src.key, dst.key))
        if p is None:
            continue
        lo, hi = max(src.first, dst.first), min(src.last, dst.last)
        if lo < p.first or hi > p.last:
            return False  # live together outside the op that justifies the overlap
        return p.allows(offsets[dst.key] - offsets[src.key])
    return False


def plan_arena(buffers: Sequence[Buffer], *, align: int = 16,
               strategies: Sequence[str] | None = None,
               overlaps: Sequence[Overlap] = _NO_OVERLAPS,
               budget: PlanBudget | None = None) -> ArenaPlan:
    """Run the strategies, keep the smallest arena, verify it.

    With a ``budget`` that has run out, the strategies not started yet are skipped
    (at least one always runs) and hill climbing stops early: the best plan so far."""
    names = list(strategies) if strategies else list(STRATEGIES)
    best: ArenaPlan | None = None
    candidates: dict[str, int] = {}
    bound = aligned_live_peak(buffers, align) if not overlaps else 0
    lower = arena_lower_bound(buffers, align, overlaps) if overlaps else bound
    for name in names:
        if strategies is None and best is not None and best.arena_bytes <= bound:
            break  # already at the live peak: no strategy can do better
        if budget is not None and best is not None and not budget.spend("arena strategies"):
            break
        try:
            strategy = STRATEGIES[name]
        except KeyError:
            raise PlanError(f"unknown arena strategy {name!r}",
                            hint="strategies: " + ", ".join(STRATEGIES)) from None
        # An earlier strategy at the lower bound wins every tie: a search need not go
        # past reaching it (its size is the bound either way).
        at_bound = best is not None and best.arena_bytes <= lower
        offsets = strategy.place(ArenaRequest(buffers, align, overlaps, budget,
                                              lower if at_bound else None))
        size = arena_size(buffers, offsets, align)
        candidates[name] = size
        if best is None or size < best.arena_bytes:
            best = ArenaPlan(name, offsets, size, candidates)
    assert best is not None
    # the plan kept is verified (the others are dropped: checking them changes nothing)
    verify_offsets(buffers, best.offsets, align, best.arena_bytes, overlaps)
    return best
