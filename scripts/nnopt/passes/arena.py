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

Every offset is a multiple of ``align``; sizes are padded to ``align`` when placed.
The live-sum peak (aligned) is a lower bound for every strategy: once a strategy
reaches it, the remaining ones are not run (they are absent from ``candidates``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import PlanError
from .lifetimes import Buffer


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _overlap_time(a: Buffer, b: Buffer) -> bool:
    return a.first <= b.last and b.first <= a.last


@dataclass(frozen=True)
class ArenaPlan:
    strategy: str
    offsets: Mapping[str, int]  # buffer key -> byte offset
    arena_bytes: int
    candidates: Mapping[str, int]  # every strategy tried -> arena bytes it reached


Strategy = Callable[[Sequence[Buffer], int], dict[str, int]]


def _first_fit(order: Sequence[Buffer], align: int) -> dict[str, int]:
    """Place buffers in the given order, each at the lowest aligned offset that fits."""
    placed: list[tuple[Buffer, int]] = []
    offsets: dict[str, int] = {}
    for b in order:
        size = _align(b.size, align)
        busy = sorted((off, off + _align(o.size, align))
                      for o, off in placed if _overlap_time(o, b))
        cur = 0
        for lo, hi in busy:
            if cur + size <= lo:
                break
            cur = max(cur, _align(hi, align))
        offsets[b.key] = cur
        placed.append((b, cur))
    return offsets


def _arena_size(buffers: Sequence[Buffer], offsets: Mapping[str, int], align: int) -> int:
    return max((offsets[b.key] + _align(b.size, align) for b in buffers), default=0)


def greedy_by_size(buffers: Sequence[Buffer], align: int) -> dict[str, int]:
    order = sorted(buffers, key=lambda b: (-b.size, -(b.tensor if b.tensor is not None else -1)))
    return _first_fit(order, align)


def greedy_by_lifetime(buffers: Sequence[Buffer], align: int) -> dict[str, int]:
    order = sorted(buffers, key=lambda b: (b.first, -b.size, b.key))
    return _first_fit(order, align)


def _two_ended_at(buffers: Sequence[Buffer], align: int, target: int) -> dict[str, int] | None:
    order = sorted(buffers, key=lambda b: (b.first, -(b.last - b.first), -b.size, b.key))
    placed: list[tuple[Buffer, int, int]] = []
    offsets: dict[str, int] = {}
    side_of: dict[str, int] = {}
    for b in order:
        size = _align(b.size, align)
        busy = sorted((lo, hi) for o, lo, hi in placed if _overlap_time(o, b))
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
        neighbours = [o for o, _, _ in placed if o.last == b.first]
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
        placed.append((b, off, off + size))
    return offsets


def two_ended(buffers: Sequence[Buffer], align: int) -> dict[str, int]:
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
        res = _two_ended_at(buffers, align, target)
        if res is not None:
            return res
        target += step
    return greedy_by_size(buffers, align)


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


def hill_climb(buffers: Sequence[Buffer], align: int, *, iterations: int = 400,
               seed: int = 0) -> dict[str, int]:
    if len(buffers) < 2:
        return _first_fit(list(buffers), align)
    bound = aligned_live_peak(buffers, align)
    starts = [
        sorted(buffers, key=lambda b: (-b.size, b.key)),
        sorted(buffers, key=lambda b: (b.first, -b.size, b.key)),
        sorted(buffers, key=lambda b: (-(b.size * (b.last - b.first + 1)), b.key)),
    ]
    best_order: list[Buffer] = []
    best = -1
    for s in starts:
        size = _arena_size(buffers, _first_fit(s, align), align)
        if best < 0 or size < best:
            best, best_order = size, list(s)
    rng = random.Random(seed)
    n = len(best_order)
    for _ in range(iterations):
        if best <= bound:
            break
        i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        cand = list(best_order)
        cand[i], cand[j] = cand[j], cand[i]
        size = _arena_size(buffers, _first_fit(cand, align), align)
        if size <= best:
            best, best_order = size, cand
    return _first_fit(best_order, align)


STRATEGIES: dict[str, Strategy] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_lifetime": greedy_by_lifetime,
    "two_ended": two_ended,
    "hill_climb": hill_climb,
}


def verify_offsets(buffers: Sequence[Buffer], offsets: Mapping[str, int], align: int,
                   arena_bytes: int) -> None:
    """Raise PlanError if two buffers live at the same time share a byte, or if any
    buffer is misaligned or outside the arena."""
    for b in buffers:
        off = offsets.get(b.key)
        if off is None:
            raise PlanError(f"buffer {b.key} has no offset")
        if off % align:
            raise PlanError(f"buffer {b.key} at offset {off} is not {align}-byte aligned")
        if off < 0 or off + b.size > arena_bytes:
            raise PlanError(f"buffer {b.key} [{off}, {off + b.size}) outside the arena "
                            f"of {arena_bytes} bytes")
    ordered = sorted(buffers, key=lambda b: offsets[b.key])
    for i, a in enumerate(ordered):
        a_lo, a_hi = offsets[a.key], offsets[a.key] + a.size
        for b in ordered[i + 1:]:
            b_lo = offsets[b.key]
            if b_lo >= a_hi:
                break
            if _overlap_time(a, b) and a.size and b.size and b_lo < a_hi and a_lo < b_lo + b.size:
                raise PlanError(f"buffers {a.key} and {b.key} overlap in space "
                                f"[{a_lo},{a_hi}) / [{b_lo},{b_lo + b.size}) and in time")


def plan_arena(buffers: Sequence[Buffer], *, align: int = 16,
               strategies: Sequence[str] | None = None) -> ArenaPlan:
    """Run the strategies, verify each result, keep the smallest arena."""
    names = list(strategies) if strategies else list(STRATEGIES)
    best: ArenaPlan | None = None
    candidates: dict[str, int] = {}
    bound = aligned_live_peak(buffers, align)
    for name in names:
        if strategies is None and best is not None and best.arena_bytes <= bound:
            break  # already at the live peak: no strategy can do better
        try:
            strategy = STRATEGIES[name]
        except KeyError:
            raise PlanError(f"unknown arena strategy {name!r}",
                            hint="strategies: " + ", ".join(STRATEGIES)) from None
        offsets = strategy(buffers, align)
        size = _arena_size(buffers, offsets, align)
        verify_offsets(buffers, offsets, align, size)
        candidates[name] = size
        if best is None or size < best.arena_bytes:
            best = ArenaPlan(name, offsets, size, candidates)
    assert best is not None
    return best
