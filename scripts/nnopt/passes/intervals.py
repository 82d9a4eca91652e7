"""Interval structures for the arena strategies (``passes.arena``).

First fit asks, for every buffer it places, which already-placed buffers are live at
the same time. Scanning every placed buffer makes a layout quadratic in the number of
buffers (NASNet-Mobile: 134 million lifetime tests in the in-place search, issue 18).
:class:`TimeIndex` answers the same question from the schedule positions instead:

- ``live[t]``: the items whose lifetime contains position ``t``;
- ``born[t]``: the items whose lifetime starts at ``t``.

The items meeting ``[first, last]`` are exactly those live at ``first`` plus those born
in ``(first, last]`` (two disjoint sets: an item born after ``first`` is not live at
it). Adding an item costs its lifetime's length, a query the query's length plus the
answer, so a whole layout costs the sum of lifetimes plus the sum of live widths:
near linear on real graphs, whose live sets stay small as they grow. The answer is the
same set the scan finds, so a first fit over it takes the same decisions.

:func:`time_neighbours` lists, once for a fixed set of lifetimes, every item each one
meets (a sweep over first uses: the sum of the live widths). A search that re-places
one buffer set in many orders (hill climbing) or derives a buffer set from a similar
one asks these lists instead of rebuilding an index for every attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from ..arith import align as round_up

T = TypeVar("T")


class TimeIndex(Generic[T]):
    """Items with lifetimes ``[first, last]`` over positions ``0 .. n_steps - 1``."""

    __slots__ = ("_born", "_live")

    def __init__(self, n_steps: int) -> None:
        self._live: list[list[T]] = [[] for _ in range(max(n_steps, 0))]
        self._born: list[list[T]] = [[] for _ in range(max(n_steps, 0))]

    def add(self, item: T, first: int, last: int) -> None:
        live = self._live
        for t in range(first, last + 1):
            live[t].append(item)
        self._born[first].append(item)

    def meeting(self, first: int, last: int) -> list[T]:
        """Every item whose lifetime intersects ``[first, last]`` (each once)."""
        out = list(self._live[first])
        born = self._born
        for t in range(first + 1, last + 1):
            out.extend(born[t])
        return out

    def live_at(self, t: int) -> Sequence[T]:
        return self._live[t]


def time_neighbours(items: Sequence[T], span: Callable[[T], tuple[int, int]]
                    ) -> list[list[T]]:
    """For each item (by position in ``items``), every other item whose lifetime
    ``span(item) = (first, last)`` intersects its own, in no particular order."""
    spans = [span(it) for it in items]
    out: list[list[T]] = [[] for _ in items]
    active: list[int] = []  # started, maybe still live
    for k in sorted(range(len(items)), key=lambda k: spans[k][0]):
        first = spans[k][0]
        active = [a for a in active if spans[a][1] >= first]
        mine = out[k]
        it = items[k]
        for a in active:  # live at ``first``: they meet (each pair found once)
            mine.append(items[a])
            out[a].append(it)
        active.append(k)
    return out


def lowest_fit(busy: list[tuple[int, int]], size: int, align: int) -> int:
    """The lowest ``align``-multiple ``s`` with ``[s, s + size)`` clear of every busy
    ``[lo, hi)`` in first-fit form (``s`` conflicts iff ``s + size > lo and s < hi``)."""
    busy.sort()
    cur = 0
    for lo, hi in busy:
        if cur + size <= lo:
            break
        if hi > cur:
            cur = round_up(hi, align)
    return cur
