"""The order search's problem (:mod:`nnopt.passes.schedule`): the :class:`ScheduleProblem`
(ops, tensors, sizes) and the :class:`Schedule` found, the problem validated into a
bitmask graph (``_compile``), its live profile and peak under an order, and its split
at cut ops into independent segments (``_segments``, ``_sub_problems``)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import PlanError


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
