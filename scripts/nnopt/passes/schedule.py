"""Operator reordering: the execution order of a DAG of operators with the least peak of
live activation memory (Liberis & Lane 2019, "Neural networks on microcontrollers:
saving memory at inference via operator reordering").

The live-sum model. In an order, tensor ``t`` is live at every step from ``first(t)`` (its
producer's position; 0 for a tensor no op writes) to ``last(t)`` (its last reader's
position; the last step for a graph output; ``first(t)`` for a tensor nobody reads).
``live(i)`` sums the sizes of the tensors live at step ``i``; the peak is its maximum.
Running op ``v`` after the set ``D`` of ops already run (a *downset*: closed under
predecessors) costs ``mem(D) + out(v)``: the tensors produced in ``D`` (or by no op) that
an op outside ``D`` still reads or that are graph outputs, plus all ``v`` writes.

How :func:`schedule` finds an order (``strategy="optimal"``):

- **Validation.** One writer per tensor, none for a graph input, no cycle; otherwise
  :class:`~nnopt.errors.PlanError`. Every tie is broken by op index and nothing but the
  search's stopping point depends on the clock, so equal problems get equal schedules.
- **Exact split at cut ops.** An op that is an ancestor or a descendant of every other op
  has the same position in every topological order. The ops between two consecutive cut
  ops form a segment. A tensor that crosses a segment is live for all of it whatever the
  order, so a segment's order changes no step of another segment: the peak is the
  maximum over segments of independent sub-problems (the crossing tensors become one
  always-live tensor). Chain-like networks (MobileNet, ResNet, DenseNet, Inception
  between modules) fall apart into small segments.
- **Lower bounds.** ``N(v)``, the bytes live during ``v`` in *every* order: its inputs
  and outputs, plus each tensor written by an ancestor of ``v`` (or by no op) that ``v``,
  a descendant of ``v`` or the graph output needs. In a downset ``D`` the bound of a
  remaining ``v`` adds what the tensors live in ``D`` must still cost at ``v``'s step:
  the whole tensor if ``v`` or a descendant reads it; otherwise, if each of its readers
  has one input and one output and starts a chain (ops with one input and one output,
  each tensor read once) that ends at a descendant of ``v``, the smaller of the tensor
  and the sum of the chains' smallest tensors, because during ``v`` either the tensor is
  still waiting for a reader or every reader ran and each chain holds a tensor. This
  *fork* bound is what proves wide parallel branches (a block input held until every
  branch starts, branch outputs held until the join) without search. Plus ``mem(D)`` and
  the smallest output of a ready op. The segment's bound is the maximum at ``D = {}``.
- **Incumbent.** The better of the file order, the lowest-index topological order and a
  greedy (a beam of width 1 ranked by the bound, peak so far, bytes held). Wider beams
  (widths shrinking with the segment size, so each stays under a second) run only when
  the exact search needs a better incumbent, or when the clock stops it.
- **Exact search: depth-first branch and bound on the decision "is there an order whose
  every step costs at most T?"**, over downsets as int bitmasks. A downset whose
  decision failed is memoised with the lower bound the failure proved (the least step
  cost that exceeded T below it), which prunes it under every later, smaller T (it does
  not depend on how the downset was reached: the rest of the order costs the same).
  First a probe at T = the lower bound (or the best bound of the whole problem, when
  another segment already forces a higher peak), with up to
  :data:`~nnopt.passes.schedule_search.PROBE_STATES` states of the budget (an eighth of
  the largest, 2,000,000; all of a smaller one): on success the order is optimal (or
  good enough for the whole). Then the wider beams, and
  top-down: T = the incumbent's peak minus one, repeated after every order found, until
  no order exists; the last order found is optimal.
- **Symmetry.** Chains that can be swapped without changing the problem (same first
  inputs, same sizes position by position, last tensors read by the same ops: identical
  parallel branches) make downsets that differ only in which chain got how far equally
  costly to complete: they share one memo entry, and of several such chains standing at
  the same position only one is advanced.
- **Free moves (sound, in place of static chain compression).** In a downset ``D`` a
  ready op ``v`` that does not increase the held memory (``mem(D+v) <= mem(D)``) and
  whose step costs at most T is run at once, without trying alternatives. Proof: in any
  completion ``x1..xk`` within T with ``v = xj``, moving ``v`` first adds a step of cost
  at most T, leaves the steps after ``xj`` unchanged, and changes each step ``xi``
  (``i < j``) by ``mem(D+v+X) - mem(D+X) <= mem(D+v) - mem(D) <= 0``, since with more
  ops run, ``v`` frees a superset of its inputs. A failure below a free move still
  proves its own bound for ``D``: a completion of peak P > T made to start with ``v``
  keeps a peak at most P. Compressing a chain ``u -> v`` statically is *not* sound in
  this model: when ``v`` expands memory, running other work between ``u`` and ``v`` can
  be strictly better, and the search keeps that option.
- **Where it is not optimal.** When a segment's search runs out of its state budget
  (expanded downsets, deterministic: ``state_budget``, and at most
  :data:`STATES_PER_SECOND` per second of ``time_budget_s``, so that the time budget is
  a count and the same problem gets the same order on any machine under any load), the
  best order found by the search or the beams is returned with ``optimal=False`` and the
  bound the probe proved (at least the static bound), unless another segment's proven
  bound already covers it. A clock is only a guard (``wall_budget_s`` seconds of the
  planner's CPU time, :func:`nnopt.passes.plan_budget.guard_clock`, default
  :data:`WALL_GUARD` times ``time_budget_s``): when it runs out first, the interrupted
  segment and every later one get the heuristic order (greedy and beams) and the static
  bound, exactly what ``strategy="heuristic"`` gives, and the result says so
  (``timed_out``): only then does the order depend on the machine's speed.
  The heuristics carry no guarantee. The result is never worse than the file order when
  that order is topological.
- ``strategy="heuristic"`` skips the exact search; ``strategy="file"`` keeps ``0..n-1``
  (which must be topological) and reports its peak and the static bound.

The modules: the problem, its validation, live profile and segments in
:mod:`.schedule_problem`; a segment's downsets and bounds in :mod:`.schedule_space`;
the beams and the exact search in :mod:`.schedule_search`; here the driver that runs
them per segment (:func:`schedule`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PlanError
from . import schedule_search
from .plan_budget import guard_clock
from .schedule_problem import (
    Schedule,
    ScheduleProblem,
    _check_order,
    _compile,
    _segments,
    _sub_problems,
    live_profile,
    peak_of,
)
from .schedule_search import _beams, _exact, _Heuristic
from .schedule_space import _SearchLimit, _Space

__all__ = ["STATES_PER_SECOND", "WALL_GUARD", "Schedule", "ScheduleProblem", "live_profile",
           "peak_of", "schedule"]

#: The order strategies :func:`schedule` takes (``--order`` offers "optimal" and "file").
#: Not the arena's placement strategies (:data:`nnopt.passes.arena.STRATEGIES`).
ORDER_STRATEGIES = ("optimal", "heuristic", "file")

#: Downsets the exact search may expand per second of ``time_budget_s``: the count
#: that stops it (the same on any machine and load). Measured: gru_imu_b's search
#: proves its order optimal with 181,119 downsets in 2.2 s of CPU time (~80,000/s) on
#: the 2-core CI-class machine, so a budget of T seconds is about 0.3 T seconds of CPU
#: there: room for the wall-clock guard (WALL_GUARD x T) on a machine several times
#: oversubscribed. The default 10 s (250,000 downsets) covers gru_imu_b's proof.
STATES_PER_SECOND = 25_000
#: The guard clock (the planner's CPU time) stops the search only past this many times
#: ``time_budget_s``: a guard for a machine too slow for the count to stop it first.
WALL_GUARD = 3.0










@dataclass
class _Seg:
    ops: list[int]  # global op indices, ascending
    space: _Space
    order: list[int]  # local order
    peak: int
    lb: int
    heur: _Heuristic


def schedule(problem: ScheduleProblem, *, strategy: str = "optimal",
             time_budget_s: float = 5.0, state_budget: int = 2_000_000,
             wall_budget_s: float | None = None) -> Schedule:
    """An execution order of the problem's ops; see the module docstring.

    The exact search stops after ``min(state_budget, time_budget_s *
    STATES_PER_SECOND)`` expanded downsets (deterministic), or at the wall-clock guard
    ``wall_budget_s`` (default ``WALL_GUARD * time_budget_s``) if that comes first."""
    if strategy not in ORDER_STRATEGIES:
        raise PlanError(f"unknown schedule strategy {strategy!r}",
                        hint="use one of: " + ", ".join(ORDER_STRATEGIES))
    g = _compile(problem)
    if strategy == "file":
        _check_order(g, range(g.n))
    file_ok = all(not g.pred[v] >> v for v in range(g.n))
    states = min(max(state_budget, 0), int(max(time_budget_s, 0.0) * STATES_PER_SECOND))
    wall = WALL_GUARD * time_budget_s if wall_budget_s is None else wall_budget_s
    budget = _SearchLimit(states, guard_clock() + max(wall, 0.0))
    segs_ops = _segments(g)
    segs: list[_Seg] = []
    explored = 0
    for ops, sub in zip(segs_ops, _sub_problems(g, segs_ops), strict=True):
        sg = _compile(sub)
        sp = _Space(sg)
        cands: list[list[int]] = []
        if file_ok:
            cands.append(list(range(sg.n)))
        if strategy != "file":
            cands.append(list(sg.topo))
        best_order: list[int] = []
        best_peak = -1
        for cand in cands:
            pk = sp.peak(cand)
            if best_peak < 0 or pk < best_peak:
                best_order, best_peak = cand, pk
        heur = _Heuristic(sp)
        if strategy != "file" and sg.n > 1 and best_peak > sp.lb:
            cand, pk, ex = schedule_search._beam(sp, *_beams(sg.n)[0])  # greedy
            explored += ex
            if pk < best_peak:
                best_order, best_peak = cand, pk
            if strategy == "heuristic" and best_peak > sp.lb:
                best_order, best_peak = heur.best(best_order, best_peak)
        lb = best_peak if sg.n <= 1 else min(sp.lb, best_peak)
        segs.append(_Seg(ops, sp, best_order, best_peak, lb, heur))
    if strategy == "optimal":
        glb = max((s.lb for s in segs), default=0)
        for s in sorted(segs, key=lambda s: (-s.peak, s.ops[0])):
            if s.peak <= glb:
                continue
            if budget.timed_out:  # no time left: the heuristic, as reproducible as can be
                s.order, s.peak = s.heur.best(s.order, s.peak)
                s.lb = min(s.lb, s.peak)
                continue
            r = _exact(s.space, s.order, s.peak, glb, budget, s.heur)
            budget.states -= r.explored
            explored += r.explored
            s.order, s.peak, s.lb = r.order, r.peak, max(s.lb, r.lower_bound)
            glb = max(glb, s.lb)
    explored += sum(s.heur.explored for s in segs)
    order = tuple(range(g.n)) if strategy == "file" else tuple(
        s.ops[v] for s in segs for v in s.order)
    peak = max((s.peak for s in segs), default=0)
    lower = max((s.lb for s in segs), default=0)
    lower = max(lower, min(problem.lower_bound(), peak))
    optimal = lower >= peak
    name = "file" if strategy == "file" else "exact" if optimal else "heuristic"
    return Schedule(order=order, peak=peak, optimal=optimal, lower_bound=min(lower, peak),
                    strategy=name, explored_states=explored, timed_out=budget.timed_out)
