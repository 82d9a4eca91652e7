"""Below the per-operator bound: choose in-place operators, permitted overlaps and a
tiled stage for a scheduled graph, and place the arena.

Analysis (``passes.inplace_ops``, ``passes.tiling``) -> choice (here) -> transform
(buffers, aliases, permissions handed to ``passes.arena``). Modes, per technique:

- ``off``: not used;
- ``auto`` (the commands' default): used where it lowers the arena (in-place depthwise
  and concatenation slices: kept when the arena shrinks; row streaming: an op runs row by
  row only where the planned offsets overlap its input and output; tiling: the stage and
  patch grid with the smallest arena within both compute caps, the extra MACs
  (``max_extra_macs``) and the estimated extra instructions (``max_extra_instructions``,
  ``passes.cost``: halo recompute at the stage ops' instructions per MAC, kernel calls
  and set-up per patch, tile copies), ties to the fewest estimated instructions; or,
  with an SRAM budget, none if the plan fits without, else the fewest estimated extra
  instructions that fit, else the smallest arena found, which ``budget.check_budget``
  then reports as not fitting);
- ``force``: applied wherever valid (tests: every path runs bit-exact on every model).

Candidate stages are ranked by an optimistic estimate (tiles live per stage step, the
full input and output as far as they may overlap, the rest of the plan's live bytes
minus what its permitted overlaps could save) and the best few are placed for real with
the quick strategies; the final plan tries every strategy. Greedy, not optimal: the
depthwise ops are tried from the highest live step down, each kept if the arena shrinks;
then every depthwise op the layout would run row by row goes in place instead where the
arena (every strategy) does not grow, as in place it is cheaper (``passes.cost``).

Evaluating a candidate costs little next to planning an arena (issue 18): a trial's
layout is derived from the configuration it extends (:func:`alias_layout`: one buffer
merged, the scratch, the stream candidates of the ops touching it; a concatenation's
views one alias at a time), and so are the terms of its lower bound
(``passes.arena.BoundTerms``), which rejects it unplaced where it cannot win; a trial
that passes is next checked with first fits stopped at the target and derived from the
base configuration's runs (``passes.arena.first_fit_within``: only the buffers the
change can move are placed again), and planned whole only if it wins. The decisions are
those of re-planning each trial.

The result carries everything the Plan records; nothing downstream re-decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..arith import align as round_up
from ..errors import PlanError
from ..ir import Graph, Op
from ..plan import InplaceOpEntry, OverlapEntry, StageEntry, TileEntry
from .arena import (
    STRATEGIES,
    ArenaPlan,
    BoundTerms,
    FirstFitRun,
    Overlap,
    arena_size,
    first_fit_within,
    fits_within,
    is_first_fit,
    plan_arena,
)
from .cost import inplace_depthwise_cost, model_cost, rows_cost, tiling_overhead
from .inplace_ops import (
    ConcatView,
    StreamCandidate,
    concat_views,
    depthwise_candidates,
    depthwise_scratch,
    op_stream_candidates,
    overlaps_of,
    safe_deltas,
    staging_bytes,
    stream_candidates,
)
from .lifetimes import Buffer, alias_roots, buffers_for, live_profile
from .plan_budget import PlanBudget
from .regions import model_macs
from .tiling import (
    Tiling,
    TilingMemo,
    grids_for,
    stage_buffers,
    stage_roots,
    stage_shapes,
    tile_stage,
)

MODES = ("auto", "off", "force")
#: Default of --max-extra-instructions: a tiling may add at most this share of the
#: model's estimated instructions (passes.cost; Cortex-M7 calibration).
DEFAULT_MAX_EXTRA_INSTRUCTIONS = 20.0
# Strategies used to compare candidate decisions (the final plan tries all).
_QUICK = ("greedy_by_size", "greedy_by_lifetime")


@dataclass(frozen=True)
class BelowOptions:
    inplace_ops: str = "auto"
    tiling: str = "auto"
    max_extra_macs: float = 15.0  # percent of the model's MACs
    budget: int | None = None  # SRAM budget in bytes (tiling fits it with least compute)
    align: int = 16
    strategies: tuple[str, ...] | None = None
    # percent of the model's estimated instructions (passes.cost) a tiling may add
    max_extra_instructions: float = DEFAULT_MAX_EXTRA_INSTRUCTIONS
    # outputs of split-like ops are views of their input (passes.lifetimes)
    views: bool = True


@dataclass
class BelowResult:
    roots: dict[int, int]
    scratch: dict[int, int]
    buffers: list[Buffer]
    overlaps: list[Overlap]
    arena: ArenaPlan
    depthwise: list[int] = field(default_factory=list)  # op indices run in place
    streams: list[StreamCandidate] = field(default_factory=list)
    streamed: dict[int, str] = field(default_factory=dict)  # op index -> direction
    modes: dict[tuple[int, int], str] = field(default_factory=dict)  # (src, dst) -> mode
    tiling: Tiling | None = None
    whole_buffers: list[Buffer] = field(default_factory=list)  # before depthwise/tiling
    views: list[ConcatView] = field(default_factory=list)

    @property
    def view_offsets(self) -> dict[int, int]:
        """Byte offset of every concatenation view within its root buffer."""
        return {v.tensor: v.byte_offset for v in self.views}


def _check_mode(name: str, mode: str) -> None:
    if mode not in MODES:
        raise PlanError(f"unknown {name} mode {mode!r}", hint="use auto, off or force")


@dataclass(frozen=True)
class _Config:
    aliases: Mapping[int, int]  # output -> input (element-wise and depthwise in place)
    scratch: Mapping[int, int]
    tiling: Tiling | None
    views: tuple[ConcatView, ...] = ()  # concatenation inputs written into their slice

    @cached_property
    def _key(self) -> tuple[Any, ...]:
        return (tuple(sorted(self.aliases.items())), tuple(sorted(self.scratch.items())),
                id(self.tiling), self.views)

    def key(self) -> tuple[Any, ...]:
        """Equal for equal configurations (the tiling by identity: one object per
        candidate within a plan); computed once per configuration."""
        return self._key

    def all_aliases(self) -> dict[int, int]:
        return {**self.aliases, **{v.tensor: v.output for v in self.views}}

    def all_scratch(self, graph: Graph) -> dict[int, int]:
        scr = dict(self.scratch)
        for v in self.views:  # the staging row after the kernel's own scratch
            scr[v.producer] = round_up(scr.get(v.producer, 0), 16) + staging_bytes(graph, v)
        return scr


def _layout(graph: Graph, order: Sequence[int], cfg: _Config, use_streams: bool,
            memo: dict[tuple[str, int, int], Any] | None = None, views: bool = True,
            untiled: Layout | None = None
            ) -> tuple[dict[int, int], list[Buffer], list[StreamCandidate], list[Overlap]]:
    """Buffers and permissions of one configuration (roots, buffers, streams, overlaps).
    ``untiled``: the layout of ``cfg`` without its tiling, if known: where the tiling
    leaves every alias in place, its buffers are those (``buffers_for`` of the same
    roots and scratch) before the stage transforms them."""
    roots = alias_roots(graph, cfg.all_aliases(), views=views) if untiled is None \
        else untiled[0]
    stage_ops: set[int] = {v.concat for v in cfg.views}  # ops never streamed
    same_roots = False
    if cfg.tiling is not None:
        tiled = stage_roots(roots, cfg.tiling)
        same_roots = tiled == roots
        roots = tiled
        stage_ops |= set(cfg.tiling.shape.ops)
    buffers = list(untiled[1]) if untiled is not None and same_roots else \
        buffers_for(graph, order, roots, cfg.all_scratch(graph))
    ovs: list[Overlap] = []
    if cfg.tiling is not None:
        lay = stage_buffers(graph, order, buffers, cfg.tiling)
        buffers, ovs = lay.buffers, list(lay.overlaps)
    if not use_streams:
        return roots, buffers, [], ovs
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    cands = [c for c in stream_candidates(graph, order, roots, buffers, memo)
             if c.op not in stage_ops]
    return roots, buffers, cands, ovs + overlaps_of(cands, pos, graph)


Layout = tuple[dict[int, int], list[Buffer], list[StreamCandidate], list[Overlap]]


@dataclass(frozen=True)
class _LayoutAux:
    """What :func:`alias_layout` looks up in a layout, indexed once: the tensors rooted
    at each root, the tensors' buffers by key, the stream candidates (with their
    permissions) by op, the scratch buffers by key."""

    members: dict[int, list[int]]
    by_key: dict[str, Buffer]  # tensor buffers
    by_op: dict[int, list[tuple[StreamCandidate, Overlap]]]
    scratch: dict[str, Buffer]
    # a derived layout: the layout it was derived from, and what changed (buffers
    # removed, added; permissions removed, added); every other one is the same object
    parent: Layout | None = None
    delta: tuple[list[Buffer], list[Buffer], list[Overlap], list[Overlap]] | None = None


class LayoutIndex:
    """What every layout of one graph and order shares: schedule positions and, per
    tensor, the ops that read or write it (to find the ops a local change touches);
    and, per layout :func:`alias_layout` derives from, its :class:`_LayoutAux` (a
    derived layout's is derived from its base's, not rebuilt)."""

    def __init__(self, graph: Graph, order: Sequence[int]) -> None:
        self.pos = {graph.ops[k].index: i for i, k in enumerate(order)}
        self.users: dict[int, list[Op]] = {}
        for op in graph.ops:
            for t in (*graph.activations(op), *op.outputs):
                users = self.users.setdefault(t, [])
                if not users or users[-1] is not op:
                    users.append(op)
        self._aux: dict[int, tuple[Layout, _LayoutAux]] = {}  # id(layout) -> it, its aux
        self._terms: dict[int, tuple[Layout, BoundTerms]] = {}

    def aux(self, lay: Layout) -> _LayoutAux:
        hit = self._aux.get(id(lay))
        if hit is not None and hit[0] is lay:
            return hit[1]
        roots, bufs, cands, ovs = lay
        members: dict[int, list[int]] = {}
        for t, r in roots.items():
            members.setdefault(r, []).append(t)
        by_op: dict[int, list[tuple[StreamCandidate, Overlap]]] = {}
        for c, o in zip(cands, ovs, strict=True):
            by_op.setdefault(c.op, []).append((c, o))
        aux = _LayoutAux(members, {b.key: b for b in bufs if b.tensor is not None}, by_op,
                         {b.key: b for b in bufs if b.tensor is None})
        self.remember(lay, aux)
        return aux

    def remember(self, lay: Layout, aux: _LayoutAux) -> None:
        self._aux[id(lay)] = (lay, aux)

    def bound_terms(self, lay: Layout, align: int) -> BoundTerms:
        """The arena lower bound's terms of ``lay`` (``passes.arena.BoundTerms``):
        derived from its parent's where :func:`alias_layout` made it, else whole."""
        chain: list[tuple[Layout, _LayoutAux | None]] = []  # up to one with terms
        terms: BoundTerms | None = None
        cur: Layout | None = lay
        while cur is not None:
            hit = self._terms.get(id(cur))
            if hit is not None and hit[0] is cur:
                terms = hit[1]
                break
            mine = self._aux.get(id(cur))
            aux = mine[1] if mine is not None and mine[0] is cur else None
            chain.append((cur, aux))
            cur = aux.parent if aux is not None and aux.delta is not None else None
        for one, aux in reversed(chain):
            if terms is not None and aux is not None and aux.delta is not None:
                terms = terms.derive(*aux.delta, aux.by_key)
            else:
                terms = BoundTerms.whole(one[1], align, one[3])
            self._terms[id(one)] = (one, terms)
        assert terms is not None
        return terms


def alias_layout(graph: Graph, index: LayoutIndex, base: Layout, trial: _Config,
                 y: int, x: int, memo: dict[tuple[str, int, int], Any]) -> Layout | None:
    """The :func:`_layout` (with streams) of ``trial``: the configuration ``base`` was
    built from plus one in-place alias ``y`` -> ``x`` (an op's output onto its dying
    input) and that op's scratch, updated locally instead of rebuilt: the output's
    buffer merges into the input's root buffer, the scratch buffers follow the
    trial's scratch, and only the ops that read or write a tensor of the merged buffer
    have their stream candidates (and permitted overlaps) recomputed; every other op's
    are the base's. The same result as ``_layout(graph, order, trial, True, memo)``;
    None where the shortcut does not apply (a tiled stage, ``y`` not its own root
    before, or the alias not taking effect): then the caller rebuilds it whole. The
    lookups go through ``index.aux`` (the base's, derived into the result's)."""
    roots0, bufs0, cands0, ovs0 = base
    if trial.tiling is not None or roots0.get(y, y) != y or len(ovs0) != len(cands0):
        return None
    rx = roots0.get(x, x)
    if rx == y or trial.all_aliases().get(y) != x:
        return None
    aux0 = index.aux(base)
    kx, ky = f"t{rx}", f"t{y}"
    bx, by = aux0.by_key.get(kx), aux0.by_key.get(ky)
    if bx is None or by is None:
        return None
    # y was nobody's alias (its own root): the trial's alias map is the base's plus
    # y -> x, so exactly the tensors rooted at y move to x's root (alias_roots)
    moved = aux0.members.get(y, [])
    roots = dict(roots0)
    for t in moved:
        roots[t] = rx
    roots[y] = rx
    members = dict(aux0.members)
    members[rx] = [*members.get(rx, ()), *moved, y]
    members.pop(y, None)
    merged = Buffer(kx, rx, max(bx.size, by.size), min(bx.first, by.first),
                    max(bx.last, by.last), tuple(sorted((*bx.aliases, y, *by.aliases))))
    buffers = [merged if b.key == kx else b for b in bufs0
               if b.tensor is not None and b.key != ky]
    pos = index.pos
    scratch: dict[str, Buffer] = {}
    removed, added = [bx, by], [merged]
    for o, n in sorted(trial.all_scratch(graph).items()):
        if n > 0:
            key = f"s{o}"
            old = aux0.scratch.get(key)  # the same scratch: the same Buffer object
            if old is None or old.size != n:
                old = Buffer(key, None, n, pos[o], pos[o], scratch_of=o)
                added.append(old)
            scratch[key] = old
    removed += [b for k, b in aux0.scratch.items() if scratch.get(k) is not b]
    buffers += scratch.values()
    # Ops whose candidates may change: those touching a tensor of the merged buffer
    # (their roots or buffers changed); every other op's tensors kept both.
    touched = {*members[rx], rx}
    redo = {op.index for t in touched for op in index.users.get(t, ())}
    stage_ops = {v.concat for v in trial.views}
    by_key = dict(aux0.by_key)
    del by_key[ky]
    by_key[kx] = merged
    by_op = dict(aux0.by_op)
    ovs_removed: list[Overlap] = []
    ovs_added: list[Overlap] = []
    for op_index in redo:
        op = graph.op_by_index[op_index]
        ovs_removed += [o for _, o in by_op.get(op_index, ())]
        new = ([] if op_index in stage_ops else
               op_stream_candidates(graph, op, pos[op_index], roots, by_key, memo))
        if new:
            new_ovs = overlaps_of(new, pos, graph)
            by_op[op_index] = list(zip(new, new_ovs, strict=True))
            ovs_added += new_ovs
        else:
            by_op.pop(op_index, None)
    cands: list[StreamCandidate] = []
    ovs: list[Overlap] = []
    for op in graph.ops:
        for cand, ov in by_op.get(op.index, ()):
            cands.append(cand)
            ovs.append(ov)
    lay = (roots, buffers, cands, ovs)
    index.remember(lay, _LayoutAux(members, by_key, by_op, scratch, base,
                                   (removed, added, ovs_removed, ovs_added)))
    return lay


def _step_costs(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                cands: Sequence[StreamCandidate]) -> list[int]:
    """Live bytes per step minus the most a permitted overlap could save there: an
    optimistic estimate of what a layout needs at each step."""
    prof = live_profile(buffers, len(order))
    size = {b.tensor: b.size for b in buffers if b.tensor is not None}
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    save = [0] * len(order)
    for c in cands:
        sx, sy = size.get(c.src, 0), size.get(c.dst, 0)
        fwd = max(0, min(sy + c.forward_max, sx)) if c.forward_max < (1 << 61) else 0
        bwd = max(0, min(sx - c.backward_min, sy)) if c.backward_min > -(1 << 61) else 0
        i = pos[c.op]
        save[i] = max(save[i], fwd, bwd)
    return [p - s for p, s in zip(prof, save, strict=True)]


def _stage_estimate(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                    tiling: Tiling, rest: Sequence[int]) -> int:
    """Optimistic arena estimate of a tiled stage: the tiles live at each stage step plus
    the full input and output (as far as they may overlap), and the rest of the plan."""
    shape = tiling.shape
    n = shape.length
    whole = {b.tensor: b for b in buffers if b.tensor is not None}
    live = [0] * n
    for t, kind in tiling.access.items():
        if kind in ("tile", "gather", "scatter"):
            b = whole.get(t)
            if kind == "tile" and b is not None:
                first, last = b.first, b.last
            else:
                first, last = 0, n - 1
            for i in range(max(first, 0), min(last, n - 1) + 1):
                live[i] += round_up(tiling.tile_bytes[t], 16)
    y = graph.tensors[shape.output].nbytes
    full = y + sum(graph.tensors[x].nbytes for x in shape.inputs)
    save = 0
    for x in shape.inputs:
        fwd, bwd = safe_deltas(tiling.steps[x])
        sx = graph.tensors[x].nbytes
        save = max(save, max(0, min(y + fwd, sx)), max(0, min(sx - bwd, y)))
    stage = max(live) + full - save
    return max(stage, max(rest[n:], default=0))


def plan_below(graph: Graph, order: Sequence[int], aliases: Mapping[int, int],
               scratch: Mapping[int, int], opts: BelowOptions,
               budget: PlanBudget | None = None) -> BelowResult:
    """Decide and place. ``aliases`` are the element-wise in-place aliases already made
    (output -> input); ``scratch`` the kernels' scratch bytes per op index.

    ``budget``: the planning budget (``passes.plan_budget``). Each candidate search stops
    when its count of work runs out, keeping the decisions made so far, and reports
    progress."""
    _check_mode("in-place", opts.inplace_ops)
    _check_mode("tiling", opts.tiling)
    use = opts.inplace_ops != "off"
    cfg = _Config(dict(aliases), dict(scratch), None)
    cache: dict[tuple[Any, ...], tuple[ArenaPlan, tuple[Any, ...]]] = {}
    layouts: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    memo: dict[tuple[str, int, int], Any] = {}  # per-op stream analysis, order-free

    index = LayoutIndex(graph, order)

    def layout_of(c: _Config) -> tuple[Any, ...]:
        key = c.key()
        if key not in layouts:
            untiled = None
            if c.tiling is not None:  # its buffers start from the untiled layout's
                untiled = layouts.get(replace(c, tiling=None).key())
            layouts[key] = _layout(graph, order, c, use, memo, opts.views, untiled)
        return layouts[key]

    def in_place(c: _Config, op: Op) -> _Config:
        """``c`` plus depthwise ``op`` in place, its layout derived from ``c``'s."""
        trial = replace(c, aliases={**c.aliases, op.outputs[0]: op.inputs[0]},
                        scratch={**c.scratch, op.index: depthwise_scratch(graph, op)})
        key = trial.key()
        if use and key not in layouts:
            lay = alias_layout(graph, index, layout_of(c), trial, op.outputs[0],
                               op.inputs[0], memo)
            if lay is not None:
                layouts[key] = lay
        return trial

    def with_views(c: _Config, views: Sequence[ConcatView]) -> _Config:
        """``c`` plus concatenation ``views``, its layout derived from ``c``'s (each
        view an alias of its input onto the concatenation's output)."""
        trial = replace(c, views=c.views + tuple(views))
        key = trial.key()
        if use and key not in layouts:
            lay: Layout | None = layout_of(c)
            for v in views:
                assert lay is not None
                lay = alias_layout(graph, index, lay, trial, v.tensor, v.output, memo)
                if lay is None:
                    break
            if lay is not None:
                layouts[key] = lay
        return trial

    def arena_of(c: _Config) -> tuple[ArenaPlan, tuple[Any, ...]]:
        """The plan of ``c`` by every strategy (verified), planned once: the same
        configuration is evaluated more than once (the last accepted trial is the
        final plan)."""
        key = c.key()
        hit = cache.get(key)
        if hit is not None:
            return hit
        lay = layout_of(c)
        res = plan_arena(lay[1], align=opts.align, strategies=opts.strategies,
                         overlaps=lay[3], budget=budget), lay
        cache[key] = res
        return res

    def at_least(c: _Config) -> int:
        """No layout of ``c`` is smaller (passes.arena.arena_lower_bound): a trial
        whose bound already loses is rejected without placing it."""
        return index.bound_terms(layout_of(c), opts.align).value()

    runs: dict[tuple[tuple[Any, ...], str], FirstFitRun] = {}

    def run_of(c: _Config, name: str) -> FirstFitRun:
        """The complete first fit ``name`` of ``c`` (placed once)."""
        key = (c.key(), name)
        if key not in runs:
            lay = layout_of(c)
            run = first_fit_within(lay[1], None, align=opts.align, strategy=name,
                                   overlaps=lay[3])
            assert run is not None
            runs[key] = run
        return runs[key]

    def reaches(c: _Config, target: int, base: _Config) -> bool:
        """Whether the full plan of ``c`` (every strategy) is <= target: the
        strategies in order, stopping at the first that gets there. A first fit
        starts from ``base``'s (``c`` differs from it locally): the prefix of the order
        placed the same way keeps its offsets."""
        lay = layout_of(c)
        for name in opts.strategies or STRATEGIES:
            if is_first_fit(name):
                run = first_fit_within(lay[1], target, align=opts.align, strategy=name,
                                       overlaps=lay[3], ref=run_of(base, name))
                if run is not None:
                    runs[(c.key(), name)] = run
                    return True
            elif fits_within(lay[1], target, align=opts.align, strategy=name,
                             overlaps=lay[3], budget=budget):
                return True
        return False

    def quick_within(c: _Config, limit: int, base: _Config) -> bool:
        """Whether ``quick_size(c)`` is <= limit: a quick strategy (each a first
        fit) places it there, derived from ``base``'s run and stopped at the limit."""
        lay = layout_of(c)
        for name in _QUICK:
            run = first_fit_within(lay[1], limit, align=opts.align, strategy=name,
                                   overlaps=lay[3], ref=run_of(base, name))
            if run is not None:
                runs[(c.key(), name)] = run
                return True
        return False

    quick: dict[tuple[Any, ...], int] = {}

    def quick_size(c: _Config, base: _Config | None = None) -> int:
        """The arena of ``c`` by the quick strategies (``plan_arena(..., strategies=
        _QUICK)``: the smaller of their first fits), from their complete runs: those
        already placed (a trial's run that fitted its limit), else each derived from
        ``base``'s (``first_fit_within``: the same offsets as placing it from scratch).
        Unverified: the configuration kept is planned whole, and verified, at the end."""
        key = c.key()
        hit = quick.get(key)
        if hit is not None:
            return hit
        lay = layout_of(c)
        size = -1
        for name in _QUICK:
            run = runs.get((key, name))
            if run is None:
                run = first_fit_within(lay[1], None, align=opts.align, strategy=name,
                                       overlaps=lay[3],
                                       ref=None if base is None else run_of(base, name))
                assert run is not None
                runs[(key, name)] = run
            n = arena_size(lay[1], run.offsets, opts.align)
            if size < 0 or n < size:
                size = n
        quick[key] = size
        return size

    def out_of_work(stage: str, done: int, total: int) -> bool:
        if budget is None:
            return False
        budget.step(stage, done, total)
        return not budget.spend(stage)

    base_bytes = quick_size(cfg)
    roots, buffers, cands, _ = layout_of(cfg)
    whole_buffers = list(buffers)
    choice = None
    if opts.tiling != "off":
        base_cfg = cfg
        choice = choose_tiling(graph, order, buffers, cands, base_bytes, opts,
                               lambda t: quick_size(replace(base_cfg, tiling=t), base_cfg),
                               plan_budget=budget)
        if choice is not None:
            cfg = replace(cfg, tiling=choice)

    if use:
        stage_ops = set(choice.shape.ops) if choice is not None else set()
        roots = layout_of(cfg)[0]
        views = concat_views(graph, roots, frozenset(stage_ops))
        by_concat: dict[int, list[ConcatView]] = {}
        for v in views:
            by_concat.setdefault(v.concat, []).append(v)
        if opts.inplace_ops == "force":
            cfg = replace(cfg, views=tuple(views))
        elif views:
            best_v = quick_size(cfg)
            for k, concat in enumerate(sorted(by_concat)):
                if out_of_work("concatenation slices", k, len(by_concat)):
                    break
                trial = with_views(cfg, by_concat[concat])
                if at_least(trial) >= best_v or not quick_within(trial, best_v - 1, cfg):
                    continue  # cannot get below the best: rejected, not planned whole
                size = quick_size(trial, cfg)
                if size < best_v:
                    best_v, cfg = size, trial

    chosen_dw: list[int] = []
    if use:
        roots = layout_of(cfg)[0]
        stage_ops = set(choice.shape.ops) if choice is not None else set()
        dws = [d for d in depthwise_candidates(graph, order, roots) if d not in stage_ops]
        if opts.inplace_ops == "force":
            chosen_dw = dws
        elif dws:
            # Greedy: the depthwise ops at the highest live steps first; keep each that
            # lowers the (quickly planned) arena.
            prof = live_profile(whole_buffers, len(order))
            pos = {graph.ops[k].index: i for i, k in enumerate(order)}
            best = quick_size(cfg)
            for k, op_index in enumerate(sorted(dws, key=lambda o: (-prof[pos[o]], o))):
                if out_of_work("in-place candidates", k, len(dws)):
                    break
                trial = in_place(cfg, graph.op_by_index[op_index])
                if at_least(trial) >= best or not quick_within(trial, best - 1, cfg):
                    continue  # cannot get below the best: rejected, not planned whole
                size = quick_size(trial, cfg)
                if size < best:
                    best = size
                    chosen_dw.append(op_index)
                    cfg = trial
            # A depthwise op the layout runs row by row costs a kernel call per row
            # (passes.cost); in place it needs a few rows of 4 channels instead of rows
            # of all channels and runs at the whole-op speed: take it wherever the arena
            # does not grow.
            plan, lay = arena_of(cfg)  # every strategy: ties matter here
            best = plan.arena_bytes
            streamed = _overlapping_ops(plan, lay[1], lay[2])
            for k, op_index in enumerate(dws):
                op = graph.op_by_index[op_index]
                if op_index in chosen_dw or op_index not in streamed:
                    continue
                if out_of_work("in-place instead of rows", k, len(dws)):
                    break
                if rows_cost(graph, op) <= inplace_depthwise_cost(graph, op):
                    continue
                trial = in_place(cfg, op)
                lb = at_least(trial)
                if lb > best:
                    continue
                if lb == best:  # the full plan is exactly best iff a strategy reaches it
                    if not reaches(trial, best, cfg):
                        continue
                    size = best
                else:
                    size = arena_of(trial)[0].arena_bytes
                if size <= best:
                    best = size
                    chosen_dw.append(op_index)
                    cfg = trial
        else:
            chosen_dw = []
        if opts.inplace_ops == "force":
            extra = dict(cfg.aliases)
            scr = dict(cfg.scratch)
            for op_index in chosen_dw:
                op = graph.op_by_index[op_index]
                extra[op.outputs[0]] = op.inputs[0]
                scr[op_index] = depthwise_scratch(graph, op)
            cfg = replace(cfg, aliases=extra, scratch=scr)

    arena, (roots, buffers, cands, ovs) = arena_of(cfg)
    res = BelowResult(roots, cfg.all_scratch(graph), buffers, ovs, arena, sorted(chosen_dw),
                      cands, tiling=cfg.tiling, whole_buffers=whole_buffers,
                      views=list(cfg.views))
    _directions(res, opts.inplace_ops == "force")
    return res


def choose_tiling(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                  cands: Sequence[StreamCandidate], base: int, opts: BelowOptions,
                  arena_of: Callable[[Tiling], int], *,
                  plan_budget: PlanBudget | None = None) -> Tiling | None:
    """The stage and grid to tile, per the objective (module docstring), or None.
    With a ``plan_budget``: the candidates placed within its count (at least one)."""
    placed = [0]

    def out_of_work() -> bool:
        if plan_budget is None:
            return False
        plan_budget.step("tiling candidates", placed[0], _MAX_TRIALS * 2)
        placed[0] += 1
        return placed[0] > 1 and not plan_budget.spend("tiling candidates")

    total = max(model_macs(graph), 1)
    cands_t = tiling_candidates(graph, order, buffers, cands)
    if not cands_t:
        return None
    cap = opts.max_extra_macs / 100.0 * total
    cap_i = opts.max_extra_instructions / 100.0 * model_cost(graph)
    budget = opts.budget
    if opts.tiling == "auto" and budget is not None and base <= budget:
        return None  # fits without extra compute
    if budget is not None and opts.tiling == "auto":
        # least extra compute (estimated instructions) that fits: cheapest first,
        # estimates that cannot fit skipped
        tried = 0
        best_seen: tuple[int, Tiling] | None = None
        for c in sorted(cands_t, key=lambda c: (c.extra_instructions, c.estimate)):
            if c.estimate > budget:
                continue
            if out_of_work():
                break
            size = arena_of(c.tiling)
            tried += 1
            if best_seen is None or size < best_seen[0]:
                best_seen = (size, c.tiling)
            if size <= budget:
                return c.tiling
            if tried >= _MAX_TRIALS * 2:
                break
        smallest = min(cands_t, key=lambda c: (c.estimate, c.extra_instructions))
        size = arena_of(smallest.tiling)
        if best_seen is None or size < best_seen[0]:
            best_seen = (size, smallest.tiling)
        # Nothing fits: the smallest arena found, if smaller than without tiling;
        # check_budget then names the overflow and the tiling that could not avoid it.
        return best_seen[1] if best_seen[0] < base else None
    pool = [c for c in cands_t if c.extra_macs <= cap and c.extra_instructions <= cap_i]
    if not pool:
        if opts.tiling != "force":
            return None
        pool = sorted(cands_t, key=lambda c: (c.extra_instructions, c.estimate))[:1]
    pool.sort(key=lambda c: (c.estimate, c.extra_instructions))
    best: tuple[int, float, Tiling] | None = None
    for c in pool[:_MAX_TRIALS]:
        if best is not None and c.estimate > best[0]:
            break  # estimates are optimistic: nothing further can win
        if out_of_work():
            break
        size = arena_of(c.tiling)
        if best is None or (size, c.extra_instructions) < (best[0], best[1]):
            best = (size, c.extra_instructions, c.tiling)
    assert best is not None
    # The estimate is a ranking, not a strict bound: cheaper candidates estimated a
    # little above the best arena may still reach it (resnet: 3x3 patches place in the
    # same 27,040 B as 3x4 at 20 % fewer instructions).
    slack = best[0] + best[0] // 20
    cheaper = sorted((c for c in pool if c.extra_instructions < best[1]
                      and c.estimate <= slack), key=lambda c: c.extra_instructions)
    for c in cheaper[:_MAX_TRIALS]:
        if out_of_work():
            break
        size = arena_of(c.tiling)
        if (size, c.extra_instructions) < (best[0], best[1]):
            best = (size, c.extra_instructions, c.tiling)
    if opts.tiling == "auto" and best[0] >= base:
        return None
    return best[2]


@dataclass(frozen=True)
class TilingCandidate:
    """A stage and grid with its optimistic arena estimate and compute costs."""

    estimate: int  # optimistic arena bytes
    extra_macs: int
    extra_instructions: float  # estimated (passes.cost)
    tiling: Tiling


def tiling_candidates(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                      cands: Sequence[StreamCandidate]) -> list[TilingCandidate]:
    """Every stage and grid choose_tiling considers (for reports and tests)."""
    rest = _step_costs(graph, order, buffers, cands)
    out = []
    memo = TilingMemo()
    for shape in stage_shapes(graph, order):
        for grid in grids_for(graph, shape):
            t = tile_stage(graph, shape, grid, memo)
            if t is not None:
                out.append(TilingCandidate(_stage_estimate(graph, order, buffers, t, rest),
                                           t.macs - t.base_macs, tiling_overhead(graph, t),
                                           t))
    return out


_MAX_TRIALS = 8


def _overlapping_ops(arena: ArenaPlan, buffers: Sequence[Buffer],
                     cands: Sequence[StreamCandidate]) -> set[int]:
    """Ops whose planned input and output overlap (they would run row by row)."""
    size = {b.key: b.size for b in buffers}
    off = arena.offsets
    out = set()
    for c in cands:
        s, d = f"t{c.src}", f"t{c.dst}"
        if s in off and d in off and -size[d] < off[d] - off[s] < size[s]:
            out.add(c.op)
    return out


def _directions(res: BelowResult, force: bool) -> None:
    """Which streamed ops overlap as planned, and in which order they must run."""
    size = {b.key: b.size for b in res.buffers}
    off = res.arena.offsets
    for c in res.streams:
        s, d = f"t{c.src}", f"t{c.dst}"
        delta = off[d] - off[s]
        overlapping = -size[d] < delta < size[s]
        if not overlapping:
            mode = "disjoint"
        elif delta <= c.forward_max:
            mode = "forward"
        elif delta >= c.backward_min:
            mode = "backward"
        else:  # pragma: no cover - verify_offsets rejected this plan already
            raise PlanError(f"op {c.op}: planned overlap {delta} is not permitted")
        res.modes[(c.src, c.dst)] = mode
        if mode != "disjoint":
            # ops with several inputs are permitted forward overlaps only: one order
            res.streamed[c.op] = mode
        elif force:
            res.streamed.setdefault(c.op, "forward")


def plan_records(res: BelowResult, graph: Graph, order: Sequence[int]) -> dict[str, Any]:
    """The Plan fields recording the decisions (keyword arguments of ``Plan``)."""
    by_key = {b.key: b for b in res.buffers}
    overlaps = []
    for o in res.overlaps:
        src, dst = by_key[o.src], by_key[o.dst]
        assert src.tensor is not None and dst.tensor is not None
        mode = res.modes.get((src.tensor, dst.tensor))
        if mode is None:  # a stage permission: does the plan use it, in which order?
            delta = res.arena.offsets[o.dst] - res.arena.offsets[o.src]
            if not -dst.size < delta < src.size:
                mode = "disjoint"
            else:
                mode = "forward" if o.forward_max is not None and delta <= o.forward_max \
                    else "backward"
        overlaps.append(OverlapEntry(src.tensor, dst.tensor, o.first, o.last, o.forward_max,
                                     o.backward_min, mode, o.reason))
    ops: list[InplaceOpEntry] = [InplaceOpEntry(i, "depthwise_channel")
                                 for i in res.depthwise]
    ops += [InplaceOpEntry(i, "rows", d) for i, d in sorted(res.streamed.items())]
    ops += [InplaceOpEntry(v.producer, "concat_slice") for v in res.views]
    ops += [InplaceOpEntry(c, "concat_views") for c in sorted({v.concat for v in res.views})]
    macs = base = model_macs(graph)
    stages: tuple[StageEntry, ...] = ()
    t = res.tiling
    if t is not None:
        macs += t.macs - t.base_macs
        order_mode = "forward"
        for e in overlaps:
            if e.reason.startswith("stage") and e.mode == "backward":
                order_mode = "backward"
        tiles = []
        for tensor, kind in sorted(t.access.items()):
            key = {"gather": f"g{tensor}", "scatter": f"c{tensor}"}.get(kind, f"t{tensor}")
            tiles.append(TileEntry(tensor, kind, res.arena.offsets.get(key, -1),
                                   t.tile_bytes[tensor], tuple(t.regions[tensor])))
        stages = (StageEntry(t.shape.ops, 0, t.shape.length - 1, t.grid, order_mode,
                             t.shape.inputs, t.shape.output, tuple(tiles), t.macs,
                             t.base_macs, round(tiling_overhead(graph, t)),
                             round(model_cost(graph))),)
    return {"overlaps": tuple(overlaps), "inplace_ops": tuple(sorted(ops, key=lambda e: e.op)),
            "stages": stages, "macs": macs, "base_macs": base}
