"""Below the per-operator bound: choose in-place operators, permitted overlaps and a
tiled stage for a scheduled graph, and place the arena.

Analysis (``passes.inplace_ops``, ``passes.tiling``) -> choice (here) -> transform
(buffers, aliases, permissions handed to ``passes.arena``). Modes, per technique:

- ``off``: not used;
- ``auto`` (default): used where it lowers the arena (in-place depthwise: kept when the
  arena shrinks; row streaming: an op runs row by row only where the planned offsets
  overlap its input and output; tiling: the stage and patch grid with the smallest arena
  within the extra-MAC budget, or with a budget, the least extra MACs that fit);
- ``force``: applied wherever valid (tests: every path runs bit-exact on every model).

The result carries everything the Plan records; nothing downstream re-decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import PlanError
from ..ir import Graph
from ..plan import InplaceOpEntry, OverlapEntry
from .arena import ArenaPlan, Overlap, plan_arena
from .inplace_ops import (
    StreamCandidate,
    depthwise_candidates,
    depthwise_scratch,
    overlaps_of,
    stream_candidates,
)
from .lifetimes import Buffer, alias_roots, buffers_for, live_profile
from .regions import model_macs

MODES = ("auto", "off", "force")
# Strategies used to compare candidate decisions (the final plan tries all).
_QUICK = ("greedy_by_size", "greedy_by_lifetime")


@dataclass(frozen=True)
class BelowOptions:
    inplace_ops: str = "auto"
    tiling: str = "auto"
    max_extra_macs: float = 15.0  # percent of the model's MACs
    budget: int | None = None  # SRAM budget in bytes (tiling fits it with least MACs)
    align: int = 16
    strategies: tuple[str, ...] | None = None


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


def _check_mode(name: str, mode: str) -> None:
    if mode not in MODES:
        raise PlanError(f"unknown {name} mode {mode!r}", hint="use auto, off or force")


def _layout(graph: Graph, order: Sequence[int], roots: Mapping[int, int],
            scratch: Mapping[int, int], use_streams: bool
            ) -> tuple[list[Buffer], list[StreamCandidate], list[Overlap]]:
    buffers = buffers_for(graph, order, roots, scratch)
    if not use_streams:
        return buffers, [], []
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    cands = stream_candidates(graph, order, roots, buffers)
    return buffers, cands, overlaps_of(cands, pos, graph)


def plan_below(graph: Graph, order: Sequence[int], aliases: Mapping[int, int],
               scratch: Mapping[int, int], opts: BelowOptions) -> BelowResult:
    """Decide and place. ``aliases`` are the element-wise in-place aliases already made
    (output -> input); ``scratch`` the kernels' scratch bytes per op index."""
    _check_mode("in-place", opts.inplace_ops)
    _check_mode("tiling", opts.tiling)
    use = opts.inplace_ops != "off"
    extra = dict(aliases)
    scr = dict(scratch)
    roots = alias_roots(graph, extra)
    buffers, cands, ovs = _layout(graph, order, roots, scr, use)

    def arena_of(bufs: Sequence[Buffer], o: Sequence[Overlap], quick: bool) -> ArenaPlan:
        strategies = _QUICK if quick else opts.strategies
        return plan_arena(bufs, align=opts.align, strategies=strategies, overlaps=o)

    chosen_dw: list[int] = []
    if use:
        dws = depthwise_candidates(graph, order, roots)
        if opts.inplace_ops == "force":
            chosen_dw = dws
        elif dws:
            # Greedy: the depthwise ops at the highest live steps first; keep each that
            # lowers the (quickly planned) arena.
            prof = live_profile(buffers, len(order))
            pos = {graph.ops[k].index: i for i, k in enumerate(order)}
            best = arena_of(buffers, ovs, True).arena_bytes
            for op_index in sorted(dws, key=lambda o: (-prof[pos[o]], o)):
                op = graph.op_by_index[op_index]
                trial_extra = {**extra, op.outputs[0]: op.inputs[0]}
                trial_scr = {**scr, op_index: depthwise_scratch(graph, op)}
                r = alias_roots(graph, trial_extra)
                b, _, o = _layout(graph, order, r, trial_scr, use)
                size = arena_of(b, o, True).arena_bytes
                if size < best:
                    best = size
                    chosen_dw.append(op_index)
                    extra, scr = trial_extra, trial_scr
        for op_index in chosen_dw:
            op = graph.op_by_index[op_index]
            extra[op.outputs[0]] = op.inputs[0]
            scr[op_index] = depthwise_scratch(graph, op)
        roots = alias_roots(graph, extra)
        buffers, cands, ovs = _layout(graph, order, roots, scr, use)

    arena = arena_of(buffers, ovs, False)
    res = BelowResult(roots, scr, buffers, ovs, arena, sorted(chosen_dw), cands)
    _directions(res, opts.inplace_ops == "force")
    return res


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
        overlaps.append(OverlapEntry(src.tensor, dst.tensor, o.first, o.last, o.forward_max,
                                     o.backward_min,
                                     res.modes.get((src.tensor, dst.tensor), "disjoint"),
                                     o.reason))
    ops: list[InplaceOpEntry] = [InplaceOpEntry(i, "depthwise_channel")
                                 for i in res.depthwise]
    ops += [InplaceOpEntry(i, "rows", d) for i, d in sorted(res.streamed.items())]
    macs = model_macs(graph)
    return {"overlaps": tuple(overlaps), "inplace_ops": tuple(sorted(ops, key=lambda e: e.op)),
            "stages": (), "macs": macs, "base_macs": macs}
