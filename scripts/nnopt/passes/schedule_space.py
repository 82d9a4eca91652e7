"""The order search's state space (:mod:`nnopt.passes.schedule`): downsets of one
segment as int bitmasks, their held memory and the static, dynamic and fork lower
bounds (``_Space``, ``_Class``), and how far one search may go (``_SearchLimit``)."""

from __future__ import annotations

from collections.abc import Sequence

from .plan_budget import guard_clock
from .schedule_problem import _ancestors, _bits, _descendants, _Graph

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
