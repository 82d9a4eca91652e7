"""The planning pipeline: Graph -> passes -> Plan.

Passes run in a fixed order, each pure: fusion (graph -> graph), scheduling (order),
in-place decisions (given the order), lifetimes, arena offsets (verified). The result
holds both the transformed graph (for codegen) and the Plan (for everything).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .arith import Axis
from .boards import Board
from .cdefs import ARENA_ALIGN
from .errors import PlanError
from .ir import ConvOptions, Graph, Op, TransposeConvOptions
from .lowering.specialize import check_mode
from .ops import check_graph, known, lowering_for
from .ops.base import POINT
from .passes.arena import ArenaPlan, plan_arena
from .passes.below_bound import (
    DEFAULT_MAX_EXTRA_INSTRUCTIONS,
    BelowOptions,
    plan_below,
    plan_records,
)
from .passes.dynamic import dynamic_plan
from .passes.facts import plan_facts
from .passes.fm_bands import BandPlan, band_blockers, band_ops
from .passes.fm_evict import Eviction, evict
from .passes.fuse import Fusion, fuse_max_pool
from .passes.inplace_elementwise import plan_inplace
from .passes.inplace_ops import fold_pads, variant_query
from .passes.lifetimes import (
    Buffer,
    alias_roots,
    buffers_for,
    live_profile,
    schedule_problem,
    view_offsets,
    view_parents,
)
from .passes.plan_budget import DEFAULT_PLAN_BUDGET_S, PlanBudget, Progress
from .passes.region_place import (
    REGION_RESERVE_BYTES,
    RegionCapacity,
    RegionPlan,
    place_regions,
)
from .passes.regions import BandForm, band_of
from .passes.schedule import WALL_GUARD, peak_of, schedule
from .passes.state import plan_state
from .plan import (
    BufferEntry,
    FeatureMapEntry,
    FusionEntry,
    Plan,
    ScratchEntry,
    StageEntry,
    StepEntry,
    StoredEntry,
    TileEntry,
    WeightEntry,
)
from .planfacts import ALLOCATORS, PlanFacts

ORDERS = ("file", "optimal")
#: PlanOptions.feature_maps (``--feature-maps``)
FEATURE_MAP_MODES = ("off", "auto")


@dataclass(frozen=True)
class PlanOptions:
    order: str = "optimal"  # "file" or "optimal"
    fuse: bool = True  # fold max-pools into the producing convolution
    inplace: bool = True  # element-wise ops overwrite an input that dies
    arena_strategies: tuple[str, ...] | None = None  # None: all, smallest wins
    align: int = ARENA_ALIGN
    schedule_time_budget_s: float = 10.0
    check_kernels: bool = True  # refuse ops the runtime has no kernel for
    board: Board | None = None
    sram: int | None = None  # budget in bytes; overrides the board's arena region
    # Below the op bound (passes.below_bound): "auto" where it lowers the arena, "off",
    # or "force" wherever valid. inplace_ops: PAD folding, in-place depthwise, partial
    # overlap of a dying input and the output; tiling: patch-based first stage. Off in
    # the API by default (plans stay comparable with earlier releases); the commands
    # default to "auto" (nnopt minimises SRAM unless told otherwise).
    inplace_ops: str = "off"
    tiling: str = "off"
    max_extra_macs: float = 15.0  # tiling without a budget: at most this % more MACs
    # Kernels specialised to the model in the generated code (lowering.specialize):
    # "auto" where it pays, "off", or "force" wherever a specialised form exists.
    specialize: str = "auto"
    # tiling without a budget: at most this % more (estimated, passes.cost) instructions
    max_extra_instructions: float = DEFAULT_MAX_EXTRA_INSTRUCTIONS
    # One budget for every search of the plan, in seconds mapped onto counts of work
    # per search (passes.plan_budget; None: unlimited); past a count the best plan so far,
    # never worse than the classic one. The wall clock only guards.
    plan_budget_s: float | None = DEFAULT_PLAN_BUDGET_S
    progress: Progress | None = field(default=None, compare=False)  # (stage, done, total)
    # Feature maps out of core (issue 39): "auto" evicts whole feature maps to the
    # board's feature_map_storage when the activations fit no RAM region arrangement
    # (passes.fm_evict); "off" never.
    feature_maps: str = "off"

    @property
    def budget_bytes(self) -> int | None:
        if self.sram is not None:
            return self.sram
        return self.board.sram_bytes if self.board else None


@dataclass(frozen=True)
class PlannedModel:
    source: Graph  # as imported
    graph: Graph  # after fusion: what codegen emits
    plan: Plan
    # what codegen and the blob writer read (nnopt.planfacts), recorded by plan_model
    recorded: PlanFacts | None = None

    @property
    def facts(self) -> PlanFacts:
        """The plan facts plan_model recorded (PlanError for a model planned otherwise)."""
        if self.recorded is None:
            raise PlanError(f"the planned model {self.plan.model} carries no plan facts",
                            hint="plan it with nnopt.planner.plan_model")
        return self.recorded


def with_dynamic(planned: PlannedModel, allocator: str = "dynamic") -> PlannedModel:
    """The planned model with the dynamic allocator's plan recorded in its facts:
    ``allocator`` "dynamic" (compact after every op) or "dynamic-lazy"; "any" keeps a
    plan of either mode (the model blob: the same handles and events). A plan already
    recorded for that allocator is kept, never computed again."""
    if allocator not in (*ALLOCATORS[1:], "any"):
        raise PlanError(f"unknown dynamic allocator {allocator!r}",
                        hint="use " + " or ".join(ALLOCATORS[1:]))
    facts = planned.facts
    dyn = facts.dynamic
    if dyn is not None and allocator in ("any", "dynamic-lazy" if dyn.lazy else "dynamic"):
        return planned
    lazy = allocator == "dynamic-lazy"
    dyn = dynamic_plan(planned.graph, planned.plan, lazy=lazy)
    return replace(planned, recorded=replace(facts, dynamic=dyn))


def plan_model(graph: Graph, options: PlanOptions | None = None,
               source_bytes: bytes | None = None) -> PlannedModel:
    opts = options or PlanOptions()
    t0 = time.perf_counter()
    budget = PlanBudget(opts.plan_budget_s, opts.progress)
    planned = _plan(graph, opts, source_bytes, budget)
    views = True
    if planned.plan.views and planned.plan.arena_bytes > _copies_lower_bound(planned.graph):
        # A view keeps its whole input alive until the view's last reader: copies can
        # need less. Planned both ways (only graphs with split-like ops pay this, and
        # only when the copies could plan smaller at all).
        copies = _plan(graph, opts, source_bytes, budget, views=False)
        if copies.plan.arena_bytes < planned.plan.arena_bytes:
            planned, views = copies, False
    below = opts.inplace_ops != "off" or opts.tiling != "off"
    forced = "force" in (opts.inplace_ops, opts.tiling)  # the user asked for them
    above_peak = planned.plan.arena_bytes > planned.plan.peak_live_bytes
    if below and (budget.exhausted or (above_peak and not forced)):
        # Never worse than the classic plan (planned with a budget of its own): when a
        # search was cut short, or when in-place operators and tiling (auto) did not get
        # the arena below the live peak (then the classic plan, with its scratch-free
        # kernel variants where scratch would raise the arena, can need less: conv_ae_b)
        classic = _plan(graph, replace(opts, inplace_ops="off", tiling="off", progress=None),
                        source_bytes, budget.fresh(), views=views)
        if classic.plan.arena_bytes < planned.plan.arena_bytes:
            info = dict(planned.plan.planning_time_budget, fallback="classic")
            planned = replace(classic, plan=replace(classic.plan, planning_time_budget=info))
    # the whole planning time: every plan made (with copies of split outputs, the
    # classic fallback), not only the one kept
    caps = _region_capacities(opts, planned.plan.state_bytes)
    if caps and planned.plan.sram_bytes > (opts.budget_bytes or 0):
        # The single arena does not fit the arena region: spread the classic plan's
        # buffers over the board's activation regions (passes.region_place). Models
        # that fit never get here: their plans stay as they were.
        multi = _plan(graph, replace(opts, inplace_ops="off", tiling="off", progress=None),
                      source_bytes, budget.fresh(), views=views, regions=caps)
        if multi.plan.arenas:
            planned = multi
    board = opts.board
    if (opts.feature_maps == "auto" and board is not None and board.feature_map_storage
            and opts.budget_bytes is not None
            and planned.plan.sram_bytes > opts.budget_bytes):
        evicted = _plan(graph, replace(opts, inplace_ops="off", tiling="off", progress=None),
                        source_bytes, budget.fresh(), views=views,
                        evict_cap=opts.budget_bytes - planned.plan.state_bytes)
        if evicted.plan.feature_maps:
            planned = evicted
        else:
            # an op alone exceeds the RAM: it runs in row bands, its feature maps in
            # storage as sealed row chunks (passes.fm_bands)
            banded = _plan(graph, replace(opts, inplace_ops="off", tiling="off", fuse=False,
                                          inplace=False, progress=None),
                           source_bytes, budget.fresh(), views=views,
                           evict_cap=opts.budget_bytes - planned.plan.state_bytes, bands=True)
            if banded.plan.bands:
                planned = banded
            else:  # refused: say why no op could run in row bands
                planned = replace(planned, plan=replace(
                    planned.plan, feature_maps_refused=banded.plan.feature_maps_refused))
    seconds = round(time.perf_counter() - t0, 3)
    plan = replace(planned.plan, planning_seconds=seconds)
    return replace(planned, plan=plan, recorded=plan_facts(planned.graph, plan))


def _region_capacities(opts: PlanOptions, state_bytes: int) -> list[RegionCapacity]:
    """The board's activation regions with the bytes their arenas may take (none: the
    board declares one region, or an explicit --sram budget replaces the board's)."""
    board = opts.board
    if board is None or opts.sram is not None or len(board.activation_region_list) < 2:
        return []
    return [RegionCapacity(r.name, r.size - state_bytes if r.name == board.arena_region
                           else r.size - REGION_RESERVE_BYTES, r.bandwidth_bytes_per_s)
            for r in board.activation_region_list]


def _plan(graph: Graph, opts: PlanOptions, source_bytes: bytes | None,
          budget: PlanBudget, views: bool = True,
          regions: Sequence[RegionCapacity] = (),
          evict_cap: int | None = None, bands: bool = False) -> PlannedModel:
    if opts.order not in ORDERS:
        raise PlanError(f"unknown order {opts.order!r}", hint="use --order file or optimal")
    t0 = time.perf_counter()
    if opts.check_kernels:
        check_graph(graph)

    # Baselines on the graph as imported.
    base_problem = schedule_problem(graph, views=views)
    file_order = tuple(range(len(graph.ops)))
    peak_file = peak_of(base_problem, file_order)
    lower_bound = max((graph.op_bound(op) for op in graph.ops), default=0)

    g = graph
    fusions: list[Fusion] = []
    if opts.fuse:
        g, fusions = fuse_max_pool(graph)
    if opts.inplace_ops != "off":
        g, folded = fold_pads(g)
        fusions += folded

    problem = schedule_problem(g, views=views)
    budget.step("order search", 0, 1)
    # The search stops at a count of expanded states derived from its time budget
    # (passes.schedule.STATES_PER_SECOND) and the plan's (the same mapping): the same
    # order under any load. The clock only guards: the plan's guard left (3x the plan
    # budget, at least 60 s), never less than WALL_GUARD times the search's own budget
    # (a loaded machine, load ~25 on 2 cores, took gru_imu_b's copies search past 30 s).
    # The report names the order search when the plan's count or the clock stopped it.
    search_s = opts.schedule_time_budget_s
    if budget.seconds is not None:
        search_s = min(search_s, max(budget.seconds, 0.0))
    guard = max(WALL_GUARD * max(opts.schedule_time_budget_s, 1.0), budget.remaining())
    sched = schedule(problem, strategy="file" if opts.order == "file" else "optimal",
                     time_budget_s=search_s, wall_budget_s=guard)
    if sched.timed_out:
        budget.clock_stopped("order search")
    elif not sched.optimal and search_s < opts.schedule_time_budget_s:
        budget.exhaust("order search")  # the plan's budget, not the search's, cut it
    order = sched.order

    roots = alias_roots(g, views=views)
    unfused_peak = peak_of(base_problem, file_order) if opts.order == "file" else peak_of(
        base_problem, _unfused_order(graph, g, order, fusions))
    inplace = plan_inplace(g, order, roots) if opts.inplace else {}
    roots = alias_roots(g, inplace, views=views)

    scratch = {}
    if opts.check_kernels:
        for op in g.ops:
            # folded padding: the variant of the padded geometry (None: generic kernel)
            q = variant_query(g, op)
            n = lowering_for(op).scratch_bytes(*q) if q is not None else 0
            if n:
                scratch[op.index] = n
    # persistent state: beside the arena, so the arena's budget is what it leaves
    state, state_bytes = plan_state(g, opts.align)
    arena_budget = None if opts.budget_bytes is None else opts.budget_bytes - state_bytes
    below = None
    if opts.inplace_ops != "off" or opts.tiling != "off":
        below = plan_below(g, order, inplace, scratch, BelowOptions(
            opts.inplace_ops, opts.tiling, opts.max_extra_macs, arena_budget,
            opts.align, opts.arena_strategies, opts.max_extra_instructions, views), budget)
        roots, scratch, buffers, arena = below.roots, below.scratch, below.buffers, below.arena
        # element-wise ops inside a tiled stage run on separate tiles
        inplace = {o: i for o, i in inplace.items() if roots.get(o) == roots.get(i, i)}
    else:
        buffers = buffers_for(g, order, roots, scratch)
        budget.step("arena strategies", 0, 1)
        arena = plan_arena(buffers, align=opts.align, strategies=opts.arena_strategies,
                           budget=budget)
        if scratch:
            g, scratch, buffers, arena = _memory_first(g, order, roots, scratch, buffers,
                                                       arena, opts, budget)
    placed: RegionPlan | None = None
    if regions and opts.board is not None and below is None:
        home = opts.board.arena_region
        placed = place_regions(buffers, regions, home, graph=g, align=opts.align,
                               strategies=opts.arena_strategies)
        if placed is not None:
            arena = placed.arenas.get(home) or ArenaPlan("empty", {}, 0, {})
    region_of = {k: r for k, r in placed.region_of.items() if r != placed.home} if placed else {}
    evictions: list[Eviction] = []
    banding: tuple[BandPlan, ArenaPlan] | None = None
    refused: tuple[str, ...] = ()
    if bands and evict_cap is not None and opts.board is not None and below is None:
        found_bands = _bands(g, order, buffers, evict_cap, opts)
        if found_bands is not None:
            bp, arena, evictions = found_bands
            banding = bp, arena
        else:
            refused = band_blockers(g, [g.ops[k].index for k in order], buffers, _band_fn(g),
                                    evict_cap, _io_roots(buffers, set(g.outputs)))
    elif evict_cap is not None and opts.board is not None and below is None:
        found = _evictions(g, order, buffers, evict_cap, opts)
        if found is not None:
            evicted_arena, evictions = found
            arena = evicted_arena

    def offset_of(key: str) -> int:
        if key in region_of:
            assert placed is not None
            return placed.arenas[region_of[key]].offsets[key]
        if key not in arena.offsets and f"{key}@0" in arena.offsets:
            return arena.offsets[f"{key}@0"]  # an evicted feature map: its first segment
        return arena.offsets[key]

    tensor_bufs = [b for b in buffers if b.tensor is not None]
    # live sum of whole tensors (before in-place depthwise and tiling replace some)
    prof = live_profile([b for b in (below.whole_buffers if below else tensor_bufs)
                         if b.tensor is not None], len(order))
    scratch_at = [0] * len(order)
    for b in buffers:
        if b.tensor is None:
            scratch_at[b.first] += b.size

    # byte offsets within the root buffer: views of split-like ops (and in-place
    # outputs over them), concatenation inputs written into their slice
    offsets_in = {**view_offsets(g, inplace, views=views),
                  **(below.view_offsets if below is not None else {})}
    entries: list[BufferEntry] = []
    for b in tensor_bufs:
        assert b.tensor is not None
        if banding is not None and b.tensor in banding[0].stored:
            continue  # in storage as row chunks (Plan.stored), never whole at one offset
        off = offset_of(b.key)
        reg = region_of.get(b.key, "")
        entries.append(BufferEntry(b.tensor, off, b.size, b.first, b.last, region=reg))
        for a in b.aliases:  # a view, a concatenation input in its slice: at its offset
            entries.append(BufferEntry(a, off + offsets_in.get(a, 0), g.tensors[a].nbytes,
                                       b.first, b.last, alias_of=b.tensor, region=reg))
    entries.sort(key=lambda e: e.tensor)
    scratch_entries = tuple(
        ScratchEntry(b.scratch_of, offset_of(b.key), b.size, b.first,
                     region_of.get(b.key, ""))
        for b in buffers if b.scratch_of is not None)
    used_consts = sorted({t for op in g.ops for t in op.inputs
                          if t >= 0 and g.tensors[t].is_constant})
    weights = tuple(WeightEntry(t, g.tensors[t].nbytes, "flash") for t in used_consts)
    steps = tuple(StepEntry(i, g.ops[k].index, g.ops[k].opcode, prof[i], scratch_at[i])
                  for i, k in enumerate(order))
    plan = Plan(
        model=graph.name,
        source_sha256=hashlib.sha256(source_bytes).hexdigest() if source_bytes else "",
        schedule=tuple(g.ops[k].index for k in order),
        optimal=sched.optimal,
        schedule_strategy=sched.strategy,
        peak_live_bytes=max(prof, default=0),
        peak_live_bytes_file_order=peak_file,
        peak_live_bytes_unfused=unfused_peak,
        lower_bound_bytes=lower_bound,
        schedule_lower_bound_bytes=sched.lower_bound,
        arena_bytes=arena.arena_bytes,
        arena_strategy=arena.strategy,
        arena_candidates=dict(arena.candidates),
        alignment=opts.align,
        buffers=tuple(entries),
        scratch=scratch_entries,
        weights=weights,
        fusions=tuple(FusionEntry(f.op, f.into, f.kind) for f in fusions),
        inplace=tuple(sorted(inplace.items())),
        steps=steps,
        weight_bytes=sum(w.size for w in weights),
        planning_seconds=round(time.perf_counter() - t0, 3),
        planning_time_budget=budget.record(),
        board=opts.board.name if opts.board else None,
        sram_budget_bytes=opts.budget_bytes,
        options={"order": opts.order, "fuse": opts.fuse, "inplace": opts.inplace,
                 "specialize": check_mode(opts.specialize),
                 "inplace_ops": opts.inplace_ops, "tiling": opts.tiling,
                 "max_extra_macs": opts.max_extra_macs,
                 "max_extra_instructions": opts.max_extra_instructions},
        state=state,
        state_bytes=state_bytes,
        **(plan_records(below, g, order) if below is not None else {}),
        views=_view_ops(g, entries) if views else (),
        arenas={r: a.arena_bytes for r, a in placed.arenas.items() if r != placed.home}
        if placed is not None else {},
        feature_maps=tuple(FeatureMapEntry(
            e.tensor, e.tile, e.write_after, e.read_before, arena.offsets[e.src_key],
            arena.offsets[e.dst_key], e.bytes, opts.board.feature_map_storage if opts.board
            else "") for e in evictions),
        **(_band_records(g, banding, opts) if banding is not None else {}),
        feature_maps_refused=refused,
    )
    return PlannedModel(graph, g, plan)


def _bands(g: Graph, order: Sequence[int], buffers: list[Buffer], cap: int,
           opts: PlanOptions) -> tuple[BandPlan, ArenaPlan, list[Eviction]] | None:
    """Ops in row bands (passes.fm_bands), then whole feature maps evicted where the
    rest still exceeds ``cap`` (passes.fm_evict): the band plan, the arena, the
    evictions (tiles numbered after the stored chunks); None when no band size fits."""
    idx_order = [g.ops[k].index for k in order]
    band = _band_fn(g)
    # graph inputs and outputs stay in RAM; failing that, a graph input a banded op
    # reads may live in storage, written there by the application (nnrt's input writer)
    outputs = _io_roots(buffers, set(g.outputs))
    inputs = _io_roots(buffers, set(g.inputs)) - outputs
    tries = [(_io_roots(buffers, set(g.inputs) | set(g.outputs)), frozenset[int]())]
    if inputs:
        tries.append((outputs, inputs))
    for resident, app_inputs in tries:
        for share in (2, 3, 4, 6, 8, 12, 16):
            bp = band_ops(g, idx_order, buffers, band, cap, cap // share, resident, 0,
                          opts.align, app_inputs)
            if bp is None:
                break
            bufs = list(bp.buffers)
            found = _evict_maps(g, order, bufs, cap, opts.align)
            if found is None:
                continue
            seg_buffers, evictions = found
            arena = plan_arena(seg_buffers, align=opts.align,
                               strategies=opts.arena_strategies)
            if arena.arena_bytes > cap:
                continue
            first = sum(m.chunks for m in bp.stored.values())
            return bp, arena, [replace(e, tile=e.tile + first) for e in evictions]
    return None


def _band_fn(g: Graph) -> Callable[[int], BandForm | None]:
    """Each op's band form (passes.regions.band_of; a PAD of channels only: point-wise)."""
    def band(idx: int) -> BandForm | None:
        op = g.op_by_index[idx]
        form = band_of(g, op)
        if form is not None:
            return form
        if _pads_channels_only(g, op):  # its rows are its input's rows, padded
            h = g.tensors[op.outputs[0]].shape[1]
            return BandForm(POINT, (op.inputs[0],), (), Axis(h, h, 1, 1, 0))
        return None
    return band


def _io_roots(buffers: Sequence[Buffer], tensors: set[int]) -> frozenset[int]:
    """The buffers that hold one of ``tensors`` (graph inputs, outputs)."""
    return frozenset(b.tensor for b in buffers if b.tensor is not None
                     and tensors & {b.tensor, *b.aliases})


def _pads_channels_only(g: Graph, op: Op) -> bool:
    """A padding op (the ``pad`` trait) of a batch-1 NHWC tensor whose constant paddings
    leave the rows and columns alone: each output row is its input row, padded."""
    d = known(op)
    if d is None or not d.pad or len(op.inputs) < 2 or op.inputs[1] < 0:
        return False
    x, pads, y = (g.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if not pads.is_constant or len(x.shape) != 4 or x.shape[0] != 1:
        return False
    arr = pads.array().reshape(-1, 2)
    return arr.shape[0] == 4 and not arr[:3].any() and y.shape[:3] == x.shape[:3]


def _band_records(g: Graph, banding: tuple[BandPlan, ArenaPlan], opts: PlanOptions
                  ) -> dict[str, Any]:
    """Plan.bands and Plan.stored of a band plan placed in ``arena``."""
    bp, arena = banding
    device = opts.board.feature_map_storage if opts.board else ""
    stages = []
    for pos, bo in sorted(bp.banded.items()):
        op = g.op_by_index[bo.op]
        n = len(bo.bands)
        tiles = []
        for x in dict.fromkeys(g.activations(op)):
            _, h, w, _c = g.tensors[x].shape
            if x in bp.stored:
                m = bp.stored[x]
                regions = tuple((c0 * m.chunk_rows, min(h, c1 * m.chunk_rows), 0, w)
                                for c0, c1 in bo.reads[x])
                key = bo.buffers[x]
                tiles.append(TileEntry(x, "gather", arena.offsets[key],
                                       next(b.size for b in bp.buffers if b.key == key),
                                       regions))
            else:
                tiles.append(TileEntry(x, "input", 0, 0, ((0, h, 0, w),) * n))
        y = op.outputs[0]
        w = g.tensors[y].shape[2]
        # a reduction's bands are input rows; its output, one pixel, is whole in each
        regions = (((0, 1, 0, w),) * n if bo.reduce
                   else tuple((a, b, 0, w) for a, b in bo.bands))
        if y in bp.stored:
            key = bo.buffers[y]
            tiles.append(TileEntry(y, "scatter", arena.offsets[key],
                                   next(b.size for b in bp.buffers if b.key == key), regions))
        else:
            tiles.append(TileEntry(y, "output", 0, 0, regions))
        stages.append(StageEntry((bo.op,), pos, pos, (n, 1), "forward",
                                 tuple(t.tensor for t in tiles[:-1]), y, tuple(tiles), 0, 0))
    stored = []
    for t, m in sorted(bp.stored.items()):
        stored.append(StoredEntry(
            t, m.first_tile, m.chunks, m.chunk_rows, m.chunk_len(0), m.chunk_len(m.chunks - 1),
            device, "application" if t in bp.app_written else "",
            tuple((p, arena.offsets[k]) for p, lst in sorted(bp.puts.items())
                  for x, k in lst if x == t),
            tuple((q, arena.offsets[k]) for q, lst in sorted(bp.gets.items())
                  for x, k in lst if x == t)))
    return {"bands": tuple(stages), "stored": tuple(stored)}


def _evict_maps(g: Graph, order: Sequence[int], buffers: list[Buffer], cap: int,
                align: int) -> tuple[list[Buffer], list[Eviction]] | None:
    """passes.fm_evict over ``buffers`` in ``order``: each stored tensor's uses (its
    aliases' too) as schedule positions; graph inputs, outputs and aliased buffers stay."""
    root_of = {t: b.tensor for b in buffers if b.tensor is not None
               for t in (b.tensor, *b.aliases)}
    uses: dict[int, list[int]] = {}
    for pos, k in enumerate(order):
        op = g.ops[k]
        for t in dict.fromkeys((*op.inputs, *op.outputs)):
            if t in root_of and pos not in uses.get(root_of[t], []):
                uses.setdefault(root_of[t], []).append(pos)
    io = set(g.inputs) | set(g.outputs)
    evictable = frozenset(b.tensor for b in buffers if b.tensor is not None and not b.aliases
                          and b.tensor not in io)
    return evict(buffers, uses, cap, evictable, align)


def _evictions(g: Graph, order: Sequence[int], buffers: list[Buffer], cap: int,
               opts: PlanOptions) -> tuple[ArenaPlan, list[Eviction]] | None:
    """Whole feature maps out of core (passes.fm_evict) within ``cap`` bytes: the arena
    of the segment buffers and the evictions, or None."""
    found = _evict_maps(g, order, buffers, cap, opts.align)
    if found is None:
        return None
    seg_buffers, evictions = found
    if not evictions:
        return None
    arena = plan_arena(seg_buffers, align=opts.align, strategies=opts.arena_strategies)
    if arena.arena_bytes > cap:
        return None
    return arena, evictions


def _copies_lower_bound(g: Graph) -> int:
    """No plan that copies split outputs needs less than this: the op writing a copy
    holds its input and all its outputs at once (no split-like kernel runs in place or
    streams)."""
    parents = view_parents(g)
    bound = 0
    for op in g.ops:
        if any(t in parents for t in op.outputs):
            src = parents[next(t for t in op.outputs if t in parents)][0]
            bound = max(bound, g.tensors[src].nbytes
                        + sum(g.tensors[t].nbytes for t in dict.fromkeys(op.outputs)))
    return bound


def _view_ops(g: Graph, entries: Sequence[BufferEntry]) -> tuple[int, ...]:
    """The ops whose outputs the plan stores as views of their input."""
    placed = {e.tensor: e.alias_of for e in entries}
    parents = view_parents(g)
    return tuple(sorted({op.index for op in g.ops for t in op.outputs
                         if t in parents and placed.get(t) is not None}))
# options of ops whose lowering has a scratch-free variant (``scratch_free``)
_SCRATCH_FREE = (ConvOptions, TransposeConvOptions)


def _memory_first(g: Graph, order: tuple[int, ...], roots: dict[int, int],
                  scratch: dict[int, int], buffers: list[Buffer], arena: ArenaPlan,
                  opts: PlanOptions, budget: PlanBudget | None = None
                  ) -> tuple[Graph, dict[int, int], list[Buffer], ArenaPlan]:
    """Kernel scratch (im2col columns) must not raise SRAM: where an op's scratch lands
    at a step whose live tensors already fill the tensor-only arena, that op runs its
    scratch-free kernel variant instead (same results, slower). Speed elsewhere."""
    tensors_only = [b for b in buffers if b.tensor is not None]
    base = plan_arena(tensors_only, align=opts.align, strategies=opts.arena_strategies,
                      budget=budget)
    if arena.arena_bytes <= base.arena_bytes:
        return g, scratch, buffers, arena
    prof = live_profile(tensors_only, len(order))
    pos = {g.ops[k].index: i for i, k in enumerate(order)}
    tight = {idx for idx, n in scratch.items()
             if prof[pos[idx]] + n + opts.align > base.arena_bytes}
    for attempt in (tight, set(scratch)):  # the steps that overflow; then every op
        ops = tuple(replace(op, options=replace(op.options, scratch_free=True))
                    if op.index in attempt and isinstance(op.options, _SCRATCH_FREE) else op
                    for op in g.ops)
        g2 = replace(g, ops=ops)
        s2 = {op.index: n for op in g2.ops
              if op.index in scratch and (n := lowering_for(op).scratch_bytes(g2, op))}
        b2 = buffers_for(g2, order, roots, s2)
        a2 = plan_arena(b2, align=opts.align, strategies=opts.arena_strategies,
                        budget=budget)
        if a2.arena_bytes <= base.arena_bytes:
            return g2, s2, b2, a2
    return g, scratch, buffers, arena


def _unfused_order(source: Graph, fused: Graph, order: tuple[int, ...],
                   fusions: list[Fusion] | None = None) -> tuple[int, ...]:
    """The chosen order mapped back to the unfused graph (each folded max pool right
    after the op it was folded into, each folded PAD right before), as positions into
    source.ops."""
    pos_of = {op.index: k for k, op in enumerate(source.ops)}
    folded: dict[int, list[int]] = {}
    before: dict[int, list[int]] = {}
    pads = {f.op: f.into for f in fusions or [] if f.kind == "pad"}
    fused_idx = {op.index for op in fused.ops}
    for op in source.ops:
        if op.index in pads:
            before.setdefault(pads[op.index], []).append(op.index)
        elif op.index not in fused_idx:
            # the pool consumed the conv's output: put it after its producer
            prod = source.producer[op.inputs[0]]
            folded.setdefault(prod, []).append(op.index)
    out: list[int] = []
    for k in order:
        idx = fused.ops[k].index
        out.extend(pos_of[f] for f in before.get(idx, []))
        out.append(pos_of[idx])
        out.extend(pos_of[f] for f in folded.get(idx, []))
    return tuple(out)
