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
  another segment already forces a higher peak), with up to :data:`PROBE_STATES`
  states of the budget (an eighth of the largest, 2,000,000; all of a smaller one): on
  success the order is optimal (or good enough for the whole). Then the wider beams, and
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
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import PlanError
from .plan_budget import guard_clock

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
#: States the first probe of a segment may expand (at most the budget): an eighth of
#: the default 2,000,000, where the probe proves gru_imu_b's order optimal (181,119).
PROBE_STATES = 250_000
#: The guard clock (the planner's CPU time) stops the search only past this many times
#: ``time_budget_s``: a guard for a machine too slow for the count to stop it first.
WALL_GUARD = 3.0


@dataclass(frozen=True)
class ScheduleProblem:
    """Ops reading and writing activation tensors; see the module docstring.

    A tensor that some op reads but no op writes counts as present from the first step,
    like a graph input; an id in ``sizes`` that no op touches and that is neither a graph
    input nor a graph output is ignored."""

    n_ops: int
    op_inputs: tuple[tuple[int, ...], ...]  # per op: tensor ids it reads (may repeat)
    op_outputs: tuple[tuple[int, ...], ...]  # per op: tensor ids it writes
    sizes: Mapping[int, int]  # bytes per tensor id
    graph_inputs: frozenset[int]  # live from before the first op
    graph_outputs: frozenset[int]  # live until after the last op

    def __post_init__(self) -> None:
        if self.n_ops < 0 or len(self.op_inputs) != self.n_ops or len(
                self.op_outputs) != self.n_ops:
            raise PlanError(f"schedule problem has n_ops={self.n_ops} but "
                            f"{len(self.op_inputs)} input and {len(self.op_outputs)} "
                            "output lists")

    def _size(self, t: int) -> int:
        s = self.sizes.get(t)
        if s is None:
            raise PlanError(f"schedule problem: tensor {t} has no size")
        if s < 0:
            raise PlanError(f"schedule problem: tensor {t} has negative size {s}")
        return s

    def op_bound(self, op: int) -> int:
        """Bytes of the distinct tensors the op reads or writes: live during it always."""
        ts = dict.fromkeys(self.op_inputs[op] + self.op_outputs[op])
        return sum(self._size(t) for t in ts)

    def lower_bound(self) -> int:
        """The largest :meth:`op_bound`: no order peaks lower (0 without ops)."""
        return max((self.op_bound(v) for v in range(self.n_ops)), default=0)


@dataclass(frozen=True)
class Schedule:
    order: tuple[int, ...]  # op indices, a topological order
    peak: int  # live-sum peak of that order
    optimal: bool  # proven optimal under the live-sum model
    lower_bound: int  # best proven lower bound (== peak when optimal)
    strategy: str  # "exact", "heuristic" or "file"
    explored_states: int  # search effort: expanded downsets (exact search and beams)
    timed_out: bool = False  # the wall-clock guard, not the state count, stopped a search


# --------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class _Graph:
    """A validated problem with tensors renumbered 0..T-1 (in tensor-id order)."""

    n: int
    tids: tuple[int, ...]  # local tensor -> tensor id
    size: tuple[int, ...]
    ins: tuple[tuple[int, ...], ...]  # distinct local tensors read, per op
    outs: tuple[tuple[int, ...], ...]  # distinct local tensors written, per op
    producer: tuple[int, ...]  # -1 when no op writes the tensor
    cons: tuple[int, ...]  # bitmask of the ops reading the tensor
    is_out: tuple[bool, ...]
    pred: tuple[int, ...]  # bitmask of the ops an op depends on
    succ: tuple[tuple[int, ...], ...]
    topo: tuple[int, ...]  # the topological order that prefers the lowest index


def _compile(p: ScheduleProblem) -> _Graph:
    n = p.n_ops
    ids: set[int] = set(p.graph_inputs) | set(p.graph_outputs)
    for v in range(n):
        ids.update(p.op_inputs[v])
        ids.update(p.op_outputs[v])
    tids = tuple(sorted(ids))
    local = {t: i for i, t in enumerate(tids)}
    size = tuple(p._size(t) for t in tids)
    nt = len(tids)
    producer = [-1] * nt
    outs: list[tuple[int, ...]] = []
    for v in range(n):
        o = tuple(local[t] for t in dict.fromkeys(p.op_outputs[v]))
        for t in o:
            if producer[t] >= 0:
                raise PlanError(f"tensor {tids[t]} is written by ops {producer[t]} and {v}")
            if tids[t] in p.graph_inputs:
                raise PlanError(f"graph input {tids[t]} is written by op {v}")
            producer[t] = v
        outs.append(o)
    cons = [0] * nt
    pred = [0] * n
    ins: list[tuple[int, ...]] = []
    for v in range(n):
        i = tuple(local[t] for t in dict.fromkeys(p.op_inputs[v]))
        for t in i:
            if producer[t] == v:
                raise PlanError(f"op {v} reads tensor {tids[t]} it writes itself (a cycle)")
            cons[t] |= 1 << v
            if producer[t] >= 0:
                pred[v] |= 1 << producer[t]
        ins.append(i)
    succ_l: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        for u in _bits(pred[v]):
            succ_l[u].append(v)
    # Kahn's algorithm, lowest index first.
    indeg = [pred[v].bit_count() for v in range(n)]
    heap = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(heap)
    topo: list[int] = []
    while heap:
        u = heapq.heappop(heap)
        topo.append(u)
        for w in succ_l[u]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, w)
    if len(topo) != n:
        stuck = sorted(set(range(n)) - set(topo))
        shown = ", ".join(map(str, stuck[:8])) + (" ..." if len(stuck) > 8 else "")
        raise PlanError(f"the operator graph has a cycle through ops {shown}")
    return _Graph(
        n=n, tids=tids, size=size, ins=tuple(ins), outs=tuple(outs),
        producer=tuple(producer), cons=tuple(cons),
        is_out=tuple(t in p.graph_outputs for t in tids), pred=tuple(pred),
        succ=tuple(tuple(s) for s in succ_l), topo=tuple(topo))


def _bits(mask: int) -> Iterable[int]:
    """Set bit positions, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _ancestors(g: _Graph) -> list[int]:
    anc = [0] * g.n
    for v in g.topo:
        a = g.pred[v]
        for u in _bits(g.pred[v]):
            a |= anc[u]
        anc[v] = a
    return anc


def _descendants(g: _Graph) -> list[int]:
    desc = [0] * g.n
    for v in reversed(g.topo):
        d = 0
        for w in g.succ[v]:
            d |= desc[w] | (1 << w)
        desc[v] = d
    return desc


def _check_order(g: _Graph, order: Sequence[int]) -> None:
    if sorted(order) != list(range(g.n)):
        raise PlanError(f"an order must list each of the {g.n} ops exactly once")
    done = 0
    for v in order:
        if g.pred[v] & ~done:
            missing = next(iter(_bits(g.pred[v] & ~done)))
            raise PlanError(f"op {v} runs before op {missing}, whose output it reads")
        done |= 1 << v


def _intervals(g: _Graph, order: Sequence[int]) -> list[tuple[int, int]]:
    """(first, last) position of each local tensor, by the model's definition."""
    n = len(order)
    pos = [0] * g.n
    for i, v in enumerate(order):
        pos[v] = i
    out = []
    for t in range(len(g.tids)):
        first = pos[g.producer[t]] if g.producer[t] >= 0 else 0
        if g.is_out[t]:
            last = n - 1
        elif g.cons[t]:
            last = max(pos[v] for v in _bits(g.cons[t]))
        else:
            last = first
        out.append((first, last))
    return out


def live_profile(problem: ScheduleProblem, order: Sequence[int]) -> list[int]:
    """Live bytes at each step of ``order`` (raises PlanError unless it is topological)."""
    g = _compile(problem)
    _check_order(g, order)
    n = len(order)
    diff = [0] * (n + 1)
    if n == 0:
        return []
    for t, (first, last) in enumerate(_intervals(g, order)):
        diff[first] += g.size[t]
        diff[last + 1] -= g.size[t]
    prof = []
    acc = 0
    for i in range(n):
        acc += diff[i]
        prof.append(acc)
    return prof


def peak_of(problem: ScheduleProblem, order: Sequence[int]) -> int:
    """The live-sum peak of ``order`` (0 without ops)."""
    return max(live_profile(problem, order), default=0)


# --------------------------------------------------------------------------- segments


def _segments(g: _Graph) -> list[list[int]]:
    """Ops grouped into consecutive segments separated by cut ops (each its own segment)."""
    if g.n == 0:
        return []
    anc = _ancestors(g)
    desc = _descendants(g)
    cuts = [v for v in range(g.n) if (anc[v] | desc[v]).bit_count() == g.n - 1]
    cuts.sort(key=lambda v: anc[v].bit_count())
    segs: list[list[int]] = []
    done = 0
    for c in cuts:
        before = anc[c] & ~done
        if before:
            segs.append(list(_bits(before)))
        segs.append([c])
        done |= before | (1 << c)
    rest = ((1 << g.n) - 1) & ~done
    if rest:
        segs.append(list(_bits(rest)))
    return segs


def _sub_problems(g: _Graph, segs: list[list[int]]) -> list[ScheduleProblem]:
    """One problem per segment whose every order costs, step by step, what it costs as
    part of the whole (the tensors crossing a segment become one always-live tensor)."""
    seg_of = [0] * g.n
    for k, ops in enumerate(segs):
        for v in ops:
            seg_of[v] = k
    nseg = len(segs)
    nt = len(g.tids)
    prod_seg = [seg_of[g.producer[t]] if g.producer[t] >= 0 else -1 for t in range(nt)]
    # last segment that needs the tensor (nseg for graph outputs), -2 if none
    need_seg = []
    for t in range(nt):
        if g.is_out[t]:
            need_seg.append(nseg)
        elif g.cons[t]:
            need_seg.append(max(seg_of[v] for v in _bits(g.cons[t])))
        else:
            need_seg.append(-2)
    crossing = [0] * nseg  # bytes produced before, needed after, not touched in segment
    touched: list[set[int]] = [set() for _ in range(nseg)]
    for ops_k, ops in enumerate(segs):
        for v in ops:
            touched[ops_k].update(g.ins[v])
            touched[ops_k].update(g.outs[v])
    for t in range(nt):
        for k in range(prod_seg[t] + 1, min(need_seg[t] + 1, nseg)):
            if t not in touched[k]:
                crossing[k] += g.size[t]
    extra_id = (g.tids[-1] + 1) if g.tids else 0
    subs = []
    for k, ops in enumerate(segs):
        sizes = {g.tids[t]: g.size[t] for t in touched[k]}
        inputs = {g.tids[t] for t in touched[k] if prod_seg[t] < k}
        outputs = {g.tids[t] for t in touched[k] if need_seg[t] > k}
        if k == 0:  # tensors nobody writes or reads: live at step 0 only
            for t in range(nt):
                if prod_seg[t] < 0 and need_seg[t] == -2:
                    sizes[g.tids[t]] = g.size[t]
                    inputs.add(g.tids[t])
        if crossing[k]:
            sizes[extra_id] = crossing[k]
            inputs.add(extra_id)
            outputs.add(extra_id)
        subs.append(ScheduleProblem(
            n_ops=len(ops),
            op_inputs=tuple(tuple(g.tids[t] for t in g.ins[v]) for v in ops),
            op_outputs=tuple(tuple(g.tids[t] for t in g.outs[v]) for v in ops),
            sizes=sizes, graph_inputs=frozenset(inputs), graph_outputs=frozenset(outputs)))
    return subs


# --------------------------------------------------------------------------- search data


_DYN_MAX_OPS = 120  # segments up to this size use the dynamic bound in the search


class _SearchLimit:
    """How far one order search may go: expanded downsets (the deterministic count) and
    the guard clock's deadline. Neither the board's memory budget
    (:mod:`nnopt.memory_budget`) nor the plan's work budget
    (:class:`~nnopt.passes.plan_budget.PlanBudget`), from which the count is derived."""

    def __init__(self, states: int, deadline: float) -> None:
        self.states = states
        self.deadline = deadline
        self.timed_out = False

    def out_of_time(self) -> bool:
        if guard_clock() > self.deadline:
            self.timed_out = True
        return self.timed_out


class _Class:
    """Ops sharing the dynamic terms of the bound (see :meth:`_Space.dyn_bound`)."""

    __slots__ = ("bits", "fmask", "forks", "members", "tables", "top")

    def __init__(self, members: list[tuple[int, int]], extra: int,
                 forks: tuple[tuple[int, tuple[tuple[int, int], ...]], ...],
                 size: Sequence[int], tables: bool) -> None:
        self.members = tuple(members)  # (static bound, op), largest first
        self.top = members[0][0]
        self.fmask = sum(1 << t for t, _ in forks)
        # live tensor -> (readers' mask, bytes held if no reader ran, ((reader, held), ...))
        self.forks: dict[int, tuple[int, int, tuple[tuple[int, int], ...]]] = {}
        weight = [0] * len(size)
        for t in _bits(extra):
            weight[t] = size[t]
        for t, terms in forks:
            cap = min(size[t], sum(w for _, w in terms))
            self.forks[t] = (sum(c for c, _ in terms), cap, terms)
            weight[t] = cap
        # byte tables: weight of (live & (extra | fmask)) if no fork reader had run yet,
        # an upper bound of the class's dynamic terms
        mask = extra | self.fmask
        self.tables: list[tuple[int, list[int]]] = []
        # without tables (large segments: building them would cost more than they save)
        self.bits = tuple((1 << t, weight[t]) for t in _bits(mask)) if not tables else ()
        for shift in range(0, mask.bit_length() if tables else 0, 8):
            chunk = (mask >> shift) & 255
            if chunk:
                table = [0] * 256
                for x in range(1, 256):
                    low = x & -x
                    t = shift + low.bit_length() - 1
                    table[x] = table[x ^ low] + (weight[t] if chunk & low else 0)
                self.tables.append((shift, table))


class _Space:
    """A segment's problem as integer arrays for the search (local op and tensor bits)."""

    def __init__(self, g: _Graph) -> None:
        n = g.n
        nt = len(g.tids)
        self.n = n
        self.full = (1 << n) - 1
        self.pred = g.pred
        self.succ = g.succ
        self.wt = g.size
        needed = [g.is_out[t] or g.cons[t] != 0 for t in range(nt)]
        self.out_all = [sum(g.size[t] for t in g.outs[v]) for v in range(n)]
        self.out_keep = [sum(g.size[t] for t in g.outs[v] if needed[t]) for v in range(n)]
        self.keep_mask = [sum(1 << t for t in g.outs[v] if needed[t] and g.size[t])
                          for v in range(n)]
        self.frees = [tuple((g.cons[t], g.size[t], 1 << t) for t in g.ins[v]
                            if not g.is_out[t] and g.size[t]) for v in range(n)]
        src = [t for t in range(nt) if g.producer[t] < 0]
        self.mem0 = sum(g.size[t] for t in src if needed[t])
        self.live0 = sum(1 << t for t in src if needed[t] and g.size[t])
        self.dead0 = sum(g.size[t] for t in src if not needed[t])
        self.ready0 = sum(1 << v for v in range(n) if g.pred[v] == 0)
        # the dynamic bound pays off in the search up to this size (above it, its tables
        # cost more than they prune; the segment's bound still uses it once)
        self.dyn = n <= _DYN_MAX_OPS
        anc = _ancestors(g)
        desc = _descendants(g)
        # Chains: t -> op -> t' -> op -> ... through ops with one input and one output,
        # each tensor read by that one op only. Until the chain's last tensor is read,
        # one tensor of the chain is live: at least the chain's smallest.
        self.chain_min = list(g.size)
        chain_ts = [1 << t for t in range(nt)]  # the chain's tensors
        chain_reach = list(g.cons)  # chain ops and readers of the chain's last tensor
        chain_out = list(g.is_out)  # the chain ends in a graph output
        simple = [len(g.ins[c]) == 1 and len(g.outs[c]) == 1 for c in range(n)]
        for t in range(nt):
            u = t
            ops = 0
            while not g.is_out[u] and g.cons[u].bit_count() == 1:
                c = g.cons[u].bit_length() - 1
                if not simple[c]:
                    break
                u = g.outs[c][0]
                ops |= 1 << c
                chain_ts[t] |= 1 << u
                self.chain_min[t] = min(self.chain_min[t], g.size[u])
            chain_reach[t] = ops | g.cons[u]
            chain_out[t] = g.is_out[u]
        self.nb: list[int] = []
        # Ops with the same dynamic terms share them: one class per term set.
        groups: dict[tuple[int, tuple[tuple[int, tuple[tuple[int, int], ...]], ...]],
                     list[tuple[int, int]]] = {}
        for v in range(n):
            later = desc[v] | (1 << v)
            need = 0  # tensors read by v or a later op, or graph outputs
            early = 0  # tensors that can be live while v waits
            for t in range(nt):
                if g.size[t] and (g.is_out[t] or g.cons[t] & later):
                    need |= 1 << t
                if g.size[t] and (g.producer[t] < 0 or not (later >> g.producer[t]) & 1):
                    early |= 1 << t
            sure = 0  # live during v in every order
            for t in _bits(need):
                if g.producer[t] < 0 or (anc[v] >> g.producer[t]) & 1:
                    sure |= 1 << t
            for t in g.outs[v]:
                if g.size[t]:
                    sure |= 1 << t
            self.nb.append(sum(g.size[t] for t in _bits(sure)))
            # A live tensor t that v does not need: during v either t is still live (a
            # reader runs later) or every reader ran, and each reader c with one input
            # and one output whose chain reaches past v holds a tensor of that chain.
            forks = []
            for t in _bits(early & ~need):
                terms = []
                for c in _bits(g.cons[t] & ~(anc[v] | later)):
                    if not simple[c]:
                        continue
                    o = g.outs[c][0]
                    w = self.chain_min[o]
                    if w and not chain_ts[o] & sure and (chain_out[o]
                                                         or chain_reach[o] & desc[v]):
                        terms.append((1 << c, w))
                if terms:
                    forks.append((t, tuple(terms)))
            key = (need & ~sure & early, tuple(forks))
            groups.setdefault(key, []).append((self.nb[v], v))
        self.classes: list[_Class] = []
        for (extra, forks_k), members in groups.items():
            members.sort(key=lambda e: (-e[0], e[1]))
            self.classes.append(_Class(members, extra, forks_k, g.size, self.dyn))
        self.classes.sort(key=lambda c: (-c.top, c.members[0][1]))
        self._find_symmetry(g)
        first = min((self.out_all[v] for v in _bits(self.ready0)), default=0)
        self.lb = max(max(self.nb, default=0), self.mem0 + self.dead0 + first if n else 0,
                      self.dyn_bound(0, self.mem0, self.live0))

    def _find_symmetry(self, g: _Graph) -> None:
        """Groups of interchangeable chains: ops with one output each, every tensor inside
        read only by the next op (which has that one input), the first ops reading the
        same tensors, equal sizes position by position, the last tensors read by the same
        ops. Swapping two such chains maps the problem onto itself, so downsets that
        differ only by which chain got how far cost the same to complete."""
        n = g.n
        nxt = [-1] * n
        head = [True] * n
        for v in range(n):
            if len(g.outs[v]) != 1:
                continue
            o = g.outs[v][0]
            if g.is_out[o] or g.cons[o].bit_count() != 1:
                continue
            w = g.cons[o].bit_length() - 1
            if len(g.ins[w]) == 1 and len(g.outs[w]) == 1:
                nxt[v] = w
                head[w] = False
        by_sig: dict[tuple[object, ...], list[list[int]]] = {}
        for v in range(n):
            if not head[v] or len(g.outs[v]) != 1:
                continue
            chain = [v]
            while nxt[chain[-1]] >= 0:
                chain.append(nxt[chain[-1]])
            last = g.outs[chain[-1]][0]
            sig = (tuple(sorted(g.ins[v])), tuple(g.size[g.outs[c][0]] for c in chain),
                   g.cons[last], g.is_out[last])
            by_sig.setdefault(sig, []).append(chain)
        # per group: ((chain mask, (prefix masks by length)), ...)
        self.sym: list[tuple[tuple[int, tuple[int, ...]], ...]] = []
        self.sym_key: list[int] = [-1] * n  # group * n + position in the chain, or -1
        for chains in by_sig.values():
            if len(chains) < 2:
                continue
            gi = len(self.sym)
            entry = []
            for chain in chains:
                prefixes = [0]
                for pos, c in enumerate(chain):
                    prefixes.append(prefixes[-1] | (1 << c))
                    self.sym_key[c] = gi * n + pos
                entry.append((prefixes[-1], tuple(prefixes)))
            self.sym.append(tuple(entry))

    def canon(self, d: int) -> int:
        """The representative of d's class under swapping interchangeable chains."""
        for chains in self.sym:
            progress = sorted(((d & cm).bit_count() for cm, _ in chains), reverse=True)
            for (cm, prefixes), p in zip(chains, progress, strict=True):
                d = (d & ~cm) | prefixes[p]
        return d

    def advance(self, d: int, mem: int, live: int, v: int) -> tuple[int, int]:
        dv = d | (1 << v)
        mem += self.out_keep[v]
        live |= self.keep_mask[v]
        for cm, sz, bit in self.frees[v]:
            if not cm & ~dv:
                mem -= sz
                live ^= bit
        return mem, live

    def ready_after(self, d: int, ready: int, v: int) -> int:
        dv = d | (1 << v)
        ready &= ~(1 << v)
        for w in self.succ[v]:
            if not self.pred[w] & ~dv:
                ready |= 1 << w
        return ready

    def dyn_bound(self, d: int, mem: int, live: int, above: int = -1) -> int:
        """Max over ops v outside downset d of bytes surely live during v; or, as soon as
        one exceeds ``above``, that one."""
        best = above
        for k in self.classes:
            if k.top + mem <= best:
                break
            b = -1
            for nbv, v in k.members:
                if not (d >> v) & 1:
                    b = nbv
                    break
            if b < 0 or b + mem <= best:
                continue
            for shift, table in k.tables:
                b += table[(live >> shift) & 255]
            for bit, w in k.bits:
                if live & bit:
                    b += w
            if b <= best:
                continue
            x = live & k.fmask
            while x:
                low = x & -x
                x ^= low
                cmask, cap, terms = k.forks[low.bit_length() - 1]
                if d & cmask:
                    held = 0
                    for cbit, w in terms:
                        if not d & cbit:
                            held += w
                    if held < cap:
                        b -= cap - held
            if b > best:
                if above >= 0:
                    return b
                best = b
        return max(best, 0)

    def peak(self, order: Sequence[int]) -> int:
        d = 0
        mem = self.mem0
        live = self.live0
        peak = 0
        for i, v in enumerate(order):
            c = mem + self.out_all[v] + (self.dead0 if i == 0 else 0)
            if c > peak:
                peak = c
            mem, live = self.advance(d, mem, live, v)
            d |= 1 << v
        return peak


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
            cand, pk, ex = _beam(sp, *_beams(sg.n)[0])  # greedy
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
