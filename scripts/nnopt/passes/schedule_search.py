"""The order searches over a segment's space (:mod:`nnopt.passes.schedule`): the beams
(``_beam``: greedy and wider, the incumbents) and the exact depth-first branch and bound
on "is there an order whose every step costs at most T?" (``_decide``, ``_exact``)."""

from __future__ import annotations

from dataclasses import dataclass

from .schedule_problem import _bits
from .schedule_space import _SearchLimit, _Space

#: States the first probe of a segment may expand (at most the budget): an eighth of
#: the default 2,000,000, where the probe proves gru_imu_b's order optimal (181,119).
PROBE_STATES = 250_000


# --------------------------------------------------------------------------- heuristics


def _beam(sp: _Space, width: int, strong: bool) -> tuple[list[int], int, int]:
    """Beam search over downsets, one layer per depth, keeping the ``width`` best by
    (bound, peak so far, memory held, downset); the bound is :meth:`_Space.dyn_bound`
    when ``strong``, else memory held plus the smallest next output. Returns (order,
    peak, downsets expanded)."""
    # entry: (g, mem, d, live, ready)
    layer: list[tuple[int, int, int, int, int]] = [(0, sp.mem0, 0, sp.live0, sp.ready0)]
    back: list[list[tuple[int, int]]] = []  # per depth: (parent index, op) per entry
    expanded = 0
    out_all = sp.out_all
    for depth in range(sp.n):
        dead = sp.dead0 if depth == 0 else 0
        # downset -> (g, mem, live, ready, smallest next output, parent index, op)
        cand: dict[int, tuple[int, int, int, int, int, int, int]] = {}
        for idx, (g, mem, d, live, ready) in enumerate(layer):
            expanded += 1
            # the two smallest outputs among the ready ops, for the cheap ranking
            m1 = m2 = -1
            o1 = -1
            for v in _bits(ready):
                x = out_all[v]
                if m1 < 0 or x < m1:
                    m1, m2, o1 = x, m1, v
                elif m2 < 0 or x < m2:
                    m2 = x
            for v in _bits(ready):
                c = mem + out_all[v] + dead
                g2 = g if g >= c else c
                d2 = d | (1 << v)
                old = cand.get(d2)
                if old is not None and old[0] <= g2:
                    continue
                mem2, live2 = sp.advance(d, mem, live, v)
                ready2 = ready & ~(1 << v)
                nxt = m2 if v == o1 else m1
                for w in sp.succ[v]:
                    if not sp.pred[w] & ~d2:
                        ready2 |= 1 << w
                        if nxt < 0 or out_all[w] < nxt:
                            nxt = out_all[w]
                cand[d2] = (g2, mem2, live2, ready2, nxt, idx, v)
        ranked = []
        for d2, (g2, mem2, live2, ready2, nxt, idx, v) in cand.items():
            h = g2
            if len(cand) > width and ready2:
                h = max(g2, sp.dyn_bound(d2, mem2, live2)) if strong else max(g2, mem2 + nxt)
            ranked.append((h, g2, mem2, d2, live2, ready2, idx, v))
        ranked.sort(key=lambda e: (e[0], e[1], e[2], e[3]))
        del ranked[width:]
        layer = [(e[1], e[2], e[3], e[4], e[5]) for e in ranked]
        back.append([(e[6], e[7]) for e in ranked])
    order: list[int] = []
    idx = 0
    for depth in range(sp.n - 1, -1, -1):
        parent, v = back[depth][idx]
        order.append(v)
        idx = parent
    order.reverse()
    return order, sp.peak(order), expanded


def _beams(n: int) -> tuple[tuple[int, bool], ...]:
    """(width, strong) of the beams to run on a segment of n ops. Widths shrink with n so
    that each beam stays well under a second; the strong bound costs about n per call, so
    large segments get only the cheap ranking."""
    cheap = max(2, min(64, 4000 // max(n, 1)))
    if n > 80:
        return ((1, False), (cheap, False))
    return ((1, True), (cheap, False), (max(1, min(64, 60000 // (n * n))), True))


# --------------------------------------------------------------------------- exact


@dataclass
class _Result:
    order: list[int]
    peak: int
    lower_bound: int  # proven for the segment (== peak: optimal)
    explored: int


class _Frame:
    """A downset on the depth-first search path and the moves left to try from it."""

    __slots__ = ("cin", "d", "key", "kids", "live", "mem", "next", "op", "ready", "value")

    def __init__(self, d: int, mem: int, live: int, ready: int, cin: int, op: int) -> None:
        self.d = d
        self.key = d  # the memo key: d, or its representative under symmetry
        self.mem = mem
        self.live = live
        self.ready = ready
        self.cin = cin  # cost of the step that reached this downset
        self.op = op  # the op that step ran (-1 at the root)
        self.kids: list[int] = []
        self.next = 0
        self.value = -1  # smallest proven bound over the moves tried (-1: none yet)


@dataclass
class _Decision:
    status: str  # "found", "none" or "budget"
    path: list[int]  # the order found
    bound: int  # for "none": no completion of the root peaks lower than this


def _decide(sp: _Space, T: int, fail: dict[int, int], limit: int, budget: _SearchLimit,
            counter: list[int]) -> _Decision:
    """Is there an order whose every step costs at most T? Depth first over downsets.

    ``fail`` maps a downset to a proven lower bound (above some earlier T) of the peak of
    every completion; it is read and extended. ``counter[0]`` counts expanded downsets,
    stopping at ``limit``."""
    full = sp.full
    out_all = sp.out_all
    dead0 = sp.dead0
    sym = bool(sp.sym)
    stack: list[_Frame] = []
    pending: _Frame | None = _Frame(0, sp.mem0, sp.live0, sp.ready0, 0, -1)
    result = -1  # bound of the move just finished (-1: none)
    while True:
        if pending is not None:
            fr = pending
            pending = None
            if fr.d == full:
                return _Decision("found", [f.op for f in stack[1:]] + [fr.op], 0)
            if sym:
                fr.key = sp.canon(fr.d)
            val = fail.get(fr.key, 0)
            if val <= T:
                if counter[0] >= limit or (counter[0] & 255 == 0 and budget.out_of_time()):
                    return _Decision("budget", [], 0)
                counter[0] += 1
                val = _frame_bound(sp, fr.d, fr.mem, fr.live, fr.ready, T)
                if val <= T:
                    _moves(sp, fr, T)
                    stack.append(fr)
                    result = -1
                    continue
            if val > fail.get(fr.key, 0):
                fail[fr.key] = val
            result = val if val > fr.cin else fr.cin
        if not stack:
            return _Decision("none", [], result)
        top = stack[-1]
        if result >= 0:
            if top.value < 0 or result < top.value:
                top.value = result
            result = -1
        if top.next < len(top.kids):
            v = top.kids[top.next]
            top.next += 1
            d = top.d
            c = top.mem + out_all[v] + (dead0 if d == 0 else 0)
            if c > T:
                result = c
                continue
            mem2, live2 = sp.advance(d, top.mem, top.live, v)
            pending = _Frame(d | (1 << v), mem2, live2, sp.ready_after(d, top.ready, v), c, v)
            continue
        # every move failed: no completion of this downset stays within T
        val = top.value if top.value > T else T + 1
        if val > fail.get(top.key, 0):
            fail[top.key] = val
        stack.pop()
        result = val if val > top.cin else top.cin


def _frame_bound(sp: _Space, d: int, mem: int, live: int, ready: int, above: int) -> int:
    """A lower bound of the peak of every completion of downset d (any one that exceeds
    ``above`` will do)."""
    out_all = sp.out_all
    m = -1
    r = ready
    while r:
        low = r & -r
        x = out_all[low.bit_length() - 1]
        if m < 0 or x < m:
            m = x
        r ^= low
    h = mem + (sp.dead0 if d == 0 else 0) + m
    if h > above or not sp.dyn:
        return h
    return max(h, sp.dyn_bound(d, mem, live, above))


def _moves(sp: _Space, fr: _Frame, T: int) -> None:
    """The moves to try from a frame, best first; a single one when it is free: an op that
    does not increase memory and costs at most T (see the module docstring)."""
    d = fr.d
    mem = fr.mem
    dead = sp.dead0 if d == 0 else 0
    out_all = sp.out_all
    cands = []
    seen: set[int] = set()  # chain positions tried (of interchangeable chains)
    r = fr.ready
    while r:
        low = r & -r
        v = low.bit_length() - 1
        r ^= low
        sk = sp.sym_key[v]
        if sk >= 0:
            if sk in seen:
                continue
            seen.add(sk)
        c = mem + out_all[v] + dead
        if c > T:
            if fr.value < 0 or c < fr.value:
                fr.value = c
            continue
        mem2, _ = sp.advance(d, mem, fr.live, v)
        if mem2 <= mem:
            fr.kids = [v]
            return
        cands.append((mem2, c, v))
    cands.sort()
    fr.kids = [e[2] for e in cands]


class _Heuristic:
    """The beams of a segment beyond the greedy one, run at most once, on demand."""

    def __init__(self, sp: _Space) -> None:
        self.sp = sp
        self.result: tuple[list[int], int] | None = None
        self.explored = 0

    def best(self, order: list[int], peak: int) -> tuple[list[int], int]:
        """The better of (order, peak) and the beams' best (ties keep ``order``)."""
        if self.result is None:
            best: tuple[list[int], int] | None = None
            for width, strong in _beams(self.sp.n)[1:]:
                cand, pk, ex = _beam(self.sp, width, strong)
                self.explored += ex
                if best is None or pk < best[1]:
                    best = (cand, pk)
            self.result = best if best is not None else (order, peak)
        return self.result if self.result[1] < peak else (order, peak)


def _exact(sp: _Space, order: list[int], ub: int, target: int, budget: _SearchLimit,
           heur: _Heuristic) -> _Result:
    """The segment's optimum (or an order no worse than ``target``, a proven bound of the
    whole problem), starting from the incumbent ``order`` of peak ``ub``.

    A bottom-up probe "peak <= max(bound, target)?" with PROBE_STATES of the state budget
    settles the common case of a tight bound. Otherwise the beams improve the incumbent
    and the search goes top-down: "peak <= ub - 1?" until no such order exists. Bounds
    learnt on failed downsets carry over between decisions. When the clock stops the
    search, the result is the heuristic one, as if the search had not run."""
    n = sp.n
    lower = sp.lb
    if ub <= max(lower, target) or n <= 1:
        lb = ub if n <= 1 else min(ub, lower)
        return _Result(order, ub, lb, 0)
    fail: dict[int, int] = {}
    counter = [0]
    probe = True
    start = (order, ub)
    while ub > max(lower, target):
        if probe:
            T = max(lower, target)
            limit = min(budget.states, counter[0] + PROBE_STATES)
        else:
            T = ub - 1
            limit = budget.states
        dec = _decide(sp, T, fail, limit, budget, counter)
        if dec.status == "found":
            order = dec.path
            ub = sp.peak(order)
        elif dec.status == "none":
            lower = max(lower, dec.bound)
        elif not probe or counter[0] >= budget.states or budget.timed_out:
            break
        if probe:
            probe = False
            if ub > max(lower, target):
                order, ub = heur.best(order, ub)
    if budget.timed_out:
        order, ub = heur.best(*start)
        return _Result(order, ub, min(sp.lb, ub), counter[0])
    if lower < ub:  # the state budget ran out: let the beams have a go too
        order, ub = heur.best(order, ub)
    peak = sp.peak(order)
    lb = min(lower, peak)
    return _Result(order, peak, lb, counter[0])
