"""Arena offsets: place every buffer in one arena so that no two live ones overlap.

One interface (``Strategy``: buffers -> offsets), several strategies picked by name
from :data:`STRATEGIES`; :func:`plan_arena` runs the requested ones and keeps the
smallest valid plan (ties: the first in the list). :func:`verify_offsets` checks every
plan: two buffers whose lifetimes intersect must not intersect in space.

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
same decisions, near linear on real graphs); hill climbing re-places only from the
first swapped position and abandons a swap once it exceeds the best arena;
:func:`arena_lower_bound` (also with permitted overlaps) lets callers reject a
candidate without placing it, and a :class:`~nnopt.passes.budget.PlanBudget` bounds
the strategies' time.

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

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import PlanError
from .budget import PlanBudget
from .intervals import TimeIndex, lowest_fit
from .lifetimes import Buffer


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _overlap_time(a: Buffer, b: Buffer) -> bool:
    return a.first <= b.last and b.first <= a.last


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
    return (lo, _align(hi, align)) if lo - b_size < hi else None


@dataclass(frozen=True)
class ArenaPlan:
    strategy: str
    offsets: Mapping[str, int]  # buffer key -> byte offset
    arena_bytes: int
    candidates: Mapping[str, int]  # every strategy tried -> arena bytes it reached


Strategy = Callable[..., dict[str, int]]
"""``strategy(buffers, align, overlaps=()) -> offsets``."""


def _n_steps(buffers: Sequence[Buffer]) -> int:
    return max((b.last for b in buffers), default=-1) + 1


def _first_fit(order: Sequence[Buffer], align: int,
               overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    """Place buffers in the given order, each at the lowest aligned offset that fits."""
    res = _first_fit_from(order, align, _permits(overlaps))
    assert res is not None
    return res


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
    permitted = {k for pair in perms for k in pair}  # buffers some permission names
    for k, b in enumerate(order):
        size = _align(b.size, align)
        if k < start:
            assert known is not None
            cur = known[b.key]
        else:
            if b.key in permitted:
                busy = [iv for o, off, o_size in index.meeting(b.first, b.last)
                        if (iv := _busy(o, off, o_size, b, size, perms, align))]
            else:  # _busy without a permission: the placed buffer's own bytes
                busy = [(off, off + o_size) for _, off, o_size in index.meeting(b.first, b.last)
                        if o_size + size > 0]
            cur = lowest_fit(busy, size, align)
            if limit is not None and cur + size > limit:
                return None
        offsets[b.key] = cur
        index.add((b, cur, size), b.first, b.last)
    return offsets


def _arena_size(buffers: Sequence[Buffer], offsets: Mapping[str, int], align: int) -> int:
    return max((offsets[b.key] + _align(b.size, align) for b in buffers), default=0)


def greedy_by_size(buffers: Sequence[Buffer], align: int,
                   overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    order = sorted(buffers, key=lambda b: (-b.size, -(b.tensor if b.tensor is not None else -1)))
    return _first_fit(order, align, overlaps)


def greedy_by_lifetime(buffers: Sequence[Buffer], align: int,
                       overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int]:
    order = sorted(buffers, key=lambda b: (b.first, -b.size, b.key))
    return _first_fit(order, align, overlaps)


def _two_ended_at(buffers: Sequence[Buffer], align: int, target: int,
                  overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> dict[str, int] | None:
    order = sorted(buffers, key=lambda b: (b.first, -(b.last - b.first), -b.size, b.key))
    index: TimeIndex[tuple[Buffer, int, int]] = TimeIndex(_n_steps(order))
    dying: dict[int, list[Buffer]] = {}  # position -> placed buffers last used there
    offsets: dict[str, int] = {}
    side_of: dict[str, int] = {}
    perms = _permits(overlaps)
    for b in order:
        size = _align(b.size, align)
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
            prof[i] += _align(b.size, align)
    target = max(prof)
    upper = sum(_align(b.size, align) for b in buffers)
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
        events.append((b.first, _align(b.size, align)))
        events.append((b.last + 1, -_align(b.size, align)))
    peak = cur = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        cur += delta
        peak = max(peak, cur)
    return peak


def _most_shared(ss: int, sd: int, o: Overlap) -> int:
    """The most bytes an output of (aligned) size ``sd`` may share with its input of
    size ``ss`` under permission ``o`` (over every permitted offset difference)."""
    def shared(delta: int) -> int:  # off(dst) - off(src) = delta
        return max(0, min(ss, delta + sd) - max(0, delta))
    best = 0
    if o.forward_max is not None:
        best = shared(min(o.forward_max, max(0, ss - sd)))
    if o.backward_min is not None:
        best = max(best, shared(max(o.backward_min, min(0, ss - sd))))
    return best


def arena_lower_bound(buffers: Sequence[Buffer], align: int,
                      overlaps: Sequence[Overlap] = _NO_OVERLAPS) -> int:
    """No layout is smaller: at every position, the aligned live bytes minus the most
    each permitted overlap live there could share (bytes of a union are at least the
    sum minus the pairwise intersections, and only permitted pairs intersect). Without
    overlaps: the aligned live-sum peak."""
    if not overlaps:
        return aligned_live_peak(buffers, align)
    n = _n_steps(buffers)
    diff = [0] * (n + 1)
    by_key = {}
    for b in buffers:
        size = _align(b.size, align)
        diff[b.first] += size
        diff[b.last + 1] -= size
        by_key[b.key] = b
    for o in overlaps:
        src, dst = by_key.get(o.src), by_key.get(o.dst)
        if src is None or dst is None:
            continue
        lo, hi = max(src.first, dst.first, o.first), min(src.last, dst.last, o.last)
        if lo > hi:
            continue
        save = _most_shared(_align(src.size, align), _align(dst.size, align), o)
        diff[lo] -= save
        diff[hi + 1] += save
    peak = cur = 0
    for t in range(n):
        cur += diff[t]
        peak = max(peak, cur)
    return max(peak, max(_align(b.size, align) for b in buffers))  # and the largest


def hill_climb(buffers: Sequence[Buffer], align: int,
               overlaps: Sequence[Overlap] = _NO_OVERLAPS, *, iterations: int = 400,
               seed: int = 0, budget: PlanBudget | None = None,
               bound: int | None = None) -> dict[str, int]:
    """Local search over the first fit's placement order (module docstring). Each
    swap of positions i < j re-places only from i on (the prefix keeps its offsets) and
    stops as soon as the arena would exceed the best one (that swap is rejected
    anyway): the same decisions as re-planning every swap from scratch, much faster.
    With a ``budget``: stops when it runs out, keeping the best order found. Stops
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
    best_order: list[Buffer] = []
    best_offsets: dict[str, int] = {}
    best = -1
    for s in starts:
        offs = _first_fit_from(s, align, perms)
        assert offs is not None
        size = _arena_size(buffers, offs, align)
        if best < 0 or size < best:
            best, best_order, best_offsets = size, list(s), offs
    rng = random.Random(seed)
    n = len(best_order)
    for it in range(iterations):
        if best <= bound:
            break
        if budget is not None and it % 8 == 0:
            budget.step("arena hill climbing", it, iterations)
            if budget.expired():
                budget.exhaust("arena hill climbing")
                break
        i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        cand = list(best_order)
        cand[i], cand[j] = cand[j], cand[i]
        offs2 = _first_fit_from(cand, align, perms, start=min(i, j), known=best_offsets,
                                limit=best)
        if offs2 is None:
            continue  # above the best arena: rejected
        size = _arena_size(buffers, offs2, align)
        if size <= best:
            best, best_order, best_offsets = size, cand, offs2
    return best_offsets


STRATEGIES: dict[str, Strategy] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_lifetime": greedy_by_lifetime,
    "two_ended": two_ended,
    "hill_climb": hill_climb,
}


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
    """Run the strategies, verify each result, keep the smallest arena.

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
        if budget is not None and best is not None and budget.expired():
            budget.exhaust("arena strategies")
            break
        try:
            strategy = STRATEGIES[name]
        except KeyError:
            raise PlanError(f"unknown arena strategy {name!r}",
                            hint="strategies: " + ", ".join(STRATEGIES)) from None
        if name == "hill_climb" and (budget is not None or overlaps):
            # An earlier strategy at the lower bound wins every tie: hill climbing
            # need not search past reaching it (its size is the bound either way).
            at_bound = best is not None and best.arena_bytes <= lower
            offsets = hill_climb(buffers, align, overlaps, budget=budget,
                                 bound=lower if at_bound else None)
        else:
            offsets = strategy(buffers, align, overlaps) if overlaps else strategy(buffers, align)
        size = _arena_size(buffers, offsets, align)
        verify_offsets(buffers, offsets, align, size, overlaps)
        candidates[name] = size
        if best is None or size < best.arena_bytes:
            best = ArenaPlan(name, offsets, size, candidates)
    assert best is not None
    return best
