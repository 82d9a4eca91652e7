"""The terminal summary of a plan: per-op table with live bytes and the peak marked."""

from __future__ import annotations

from ..ir import Expansion, Graph
from ..plan import Plan, SwapPlan
from ..swap.fmap import report_lines
from .names import layer_name


def _kb(n: int) -> str:
    return f"{n:,}"


def share(used: int, budget: int) -> str:
    """``used`` as a share of ``budget`` that reads well: ``9.5 %``, ``<0.1 %``, and past
    the budget ``over by 1,234 B (1.3 x the budget)`` (never ``8576.0 % used``)."""
    budget = max(budget, 1)
    if used > budget:
        return f"over by {_kb(used - budget)} B ({used / budget:.1f} x the budget)"
    pct = 100 * used / budget
    if 0 < pct < 0.1:
        return "<0.1 %"
    return f"{pct:.1f} %" if pct < 10 else f"{pct:.0f} %"


def headline(plan: Plan, *, arena_bytes: int | None = None,
             tflm_bytes: int | None = None) -> str:
    """The report's first line, the answer: the arena, against TFLM's planner, and
    whether it fits the budget, e.g. ``arena 37,280 B (TFLM 73,728 B, -49 %), fits
    nucleo_f767zi (9.5 %)``. ``arena_bytes``: the arena the chosen allocator needs
    (default the static plan's); ``tflm_bytes``: TFLM's planned arena
    (:func:`nnopt.passes.baseline.tflm_arena_bytes`), None to leave it out."""
    arena = plan.arena_bytes if arena_bytes is None else arena_bytes
    text = f"arena {_kb(arena)} B"
    if tflm_bytes:
        delta = 100 * (arena - tflm_bytes) / tflm_bytes
        cmp = "the same" if round(delta) == 0 else f"{delta:+.0f} %".replace("+", "+")
        text += f" (TFLM {_kb(tflm_bytes)} B, {cmp})"
    sram = arena + plan.state_bytes
    if plan.state_bytes:
        text += f" + {_kb(plan.state_bytes)} B persistent state"
    budget = plan.sram_budget_bytes
    if budget is None:
        return text + "; no budget given (--board NAME or --sram BYTES)"
    where = plan.board or f"--sram {_kb(budget)} B"
    if sram <= budget:
        return text + f", fits {where} ({share(sram, budget)})"
    return text + f", does NOT fit {where}: {share(sram, budget)}"


def why_lines(plan: Plan, *, tiled_alternative: int | None = None,
              allocator: str = "static") -> list[str]:
    """Why the arena is what it is, one technique a line: reordering, fusion, in-place
    execution, tiling (and why tiling was not used). ``tiled_alternative``: the arena a
    plan without the budget reached with tiling, when the budget made tiling
    unnecessary; ``allocator``: the command's --allocator."""
    lines: list[str] = []
    before, after = plan.peak_live_bytes_file_order, plan.peak_live_bytes_unfused
    if after < before:
        lines.append(f"reordering: live peak {_kb(before)} -> {_kb(after)} B "
                     f"(-{100 * (before - after) / before:.0f} %)")
    elif plan.options.get("order") == "file":
        lines.append("reordering: off (--order file)")
    else:
        lines.append(f"reordering: no gain, the file's order already has the least live "
                     f"peak ({_kb(before)} B)")
    pools = sum(1 for f in plan.fusions if f.kind != "pad")
    pads = sum(1 for f in plan.fusions if f.kind == "pad")
    folded = [f"{pools} max-pool(s) fused" if pools else "",
              f"{pads} pad(s) folded" if pads else ""]
    kinds: dict[str, int] = {}
    for e in plan.inplace_ops:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    used = sum(1 for o in plan.overlaps if o.mode != "disjoint")
    inplace = [f"{len(plan.inplace)} element-wise op(s)" if plan.inplace else "",
               f"{kinds['depthwise_channel']} depthwise conv(s)"
               if kinds.get("depthwise_channel") else "",
               f"{kinds['rows']} row-by-row output(s)" if kinds.get("rows") else "",
               f"{kinds['concat_slice']} concatenation input(s) in their slice"
               if kinds.get("concat_slice") else "",
               f"{used} overlapping buffer(s)" if used else ""]
    done = [x for x in folded + inplace if x]
    if done:
        below = ""
        if plan.arena_bytes < plan.lower_bound_bytes:
            below = (f": {100 * (1 - plan.arena_bytes / plan.lower_bound_bytes):.0f} % "
                     f"below the op bound {_kb(plan.lower_bound_bytes)} B")
        lines.append("in place: " + ", ".join(done) + below)
    elif plan.options.get("inplace_ops") == "off" and not plan.options.get("inplace", True):
        lines.append("in place: off (--no-inplace --inplace-ops off)")
    lines.append("tiling: " + _tiling_why(plan, tiled_alternative, allocator))
    return lines


def _tiling_why(plan: Plan, tiled_alternative: int | None, allocator: str) -> str:
    if plan.stages:
        extra = sum(st.macs - st.base_macs for st in plan.stages)
        st = plan.stages[0]
        return (f"the first {len(st.ops)} ops run in {st.grid[0] * st.grid[1]} patches "
                f"(+{100 * extra / max(plan.base_macs, 1):.1f} % MACs)")
    mode = plan.options.get("tiling", "auto")
    if mode == "off":
        return ("off (the dynamic allocator moves whole tensors)"
                if allocator != "static" else "off (--tiling off)")
    budget = plan.sram_budget_bytes
    if budget is not None and plan.sram_bytes <= budget:
        alt = (f" (tiled would be {_kb(tiled_alternative)} B)"
               if tiled_alternative is not None and tiled_alternative < plan.arena_bytes
               else "")
        return "not needed: fits the budget without it" + alt
    if budget is not None:
        return "no patch-based plan brings it within the budget"
    return ("none lowers the arena within --max-extra-macs / --max-extra-instructions "
            "(or the model has no tileable first stage)")


def summary(plan: Plan) -> list[str]:
    gap = plan.peak_live_bytes_file_order - plan.peak_live_bytes
    lines = [
        f"model {plan.model}: {len(plan.schedule) + len(plan.fusions)} ops"
        + (f" ({len(plan.schedule)} after fusion)" if plan.fusions else "")
        + f", weights {_kb(plan.weight_bytes)} B",
        f"  peak SRAM as shipped (file order, live sum) "
        f"{_kb(plan.peak_live_bytes_file_order):>12} B",
        f"  peak after optimisation (live sum)          {_kb(plan.peak_live_bytes):>12} B"
        + (f"  (-{_kb(gap)} B, {100 * gap / plan.peak_live_bytes_file_order:.1f} %)"
           if gap > 0 and plan.peak_live_bytes_file_order else ""),
        f"  op bound (largest op inputs+outputs)        {_kb(plan.lower_bound_bytes):>12} B"
        + ("  (no reordering can go below; fusion/in-place did)"
           if plan.peak_live_bytes < plan.lower_bound_bytes else ""),
        f"  {f'arena ({plan.arena_strategy}, {plan.alignment}-byte aligned)':<44}"
        f"{_kb(plan.arena_bytes):>12} B  fragmentation {100 * plan.fragmentation:.1f} %",
    ]
    if plan.state:
        lines.append(f"  {f'persistent state ({len(plan.state)} variable tensor(s))':<44}"
                     f"{_kb(plan.state_bytes):>12} B  kept across invocations, outside "
                     "the arena")
        lines.append(f"  {'SRAM for data (arena + state)':<44}{_kb(plan.sram_bytes):>12} B")
    if plan.optimal:
        lines.append(f"  order: proven optimal under the live-sum model ({plan.schedule_strategy})")
    else:
        lb = plan.schedule_lower_bound_bytes
        lines.append(f"  order: {plan.schedule_strategy}, not proven optimal; within "
                     f"{_kb(plan.peak_live_bytes_unfused - lb)} B of the best bound {_kb(lb)} B")
    pools = sum(1 for f in plan.fusions if f.kind != "pad")
    if pools:
        lines.append(f"  fused: {pools} max-pool(s) into their convolution "
                     "(full conv output never stored)")
    if plan.inplace:
        lines.append(f"  in place: {len(plan.inplace)} element-wise op(s) overwrite a dying input")
    lines += below_bound_lines(plan)
    if plan.sram_budget_bytes is not None:
        where = f"board {plan.board}" if plan.board else "--sram"
        ok = plan.sram_bytes <= plan.sram_budget_bytes
        ratio = plan.sram_bytes / max(plan.sram_budget_bytes, 1)
        lines.append(f"  budget ({where}): {_kb(plan.sram_budget_bytes)} B -> "
                     + (f"fits ({share(plan.sram_bytes, plan.sram_budget_bytes)} used)" if ok
                        else f"OVER by {_kb(plan.sram_bytes - plan.sram_budget_bytes)} B "
                        f"({ratio:.1f} x the budget)"))
    for region, size in sorted(plan.arenas.items()):  # several arenas (passes.region_place)
        n = sum(1 for b in plan.buffers if b.region == region and b.alias_of is None)
        lines.append(f"  arena in {region} (several RAM regions)      {_kb(size):>12} B  "
                     f"{n} buffer(s)")
    if plan.feature_map_traffic:  # feature maps out of core: traffic, slowdown, wear
        lines += ["  " + x for x in report_lines(plan.feature_map_traffic)]
    elif plan.feature_maps:  # feature maps out of core (passes.fm_evict)
        moved = sum(e.bytes + 16 for e in plan.feature_maps)
        lines.append(f"  feature maps out of core: {len(plan.feature_maps)} sealed tile(s) to "
                     f"{plan.feature_maps[0].device}, {_kb(moved)} B written and read back "
                     "per inference")
    lines.append(f"  planned in {plan.planning_seconds:.2f} s" + budget_note(plan))
    return lines


_EXPANSION_WHAT = {"float16": "float16 weights expanded to float32",
                   "densify": "sparse weights densified"}


def expansion_lines(expansions: tuple[Expansion, ...]) -> list[str]:
    """What the frontend's build-time weight expansions cost in ROM (one line each)."""
    return [f"  {_EXPANSION_WHAT.get(e.kind, e.kind)}: {e.tensors} tensor(s), "
            f"{e.file_bytes:,} B in the file -> {e.rom_bytes:,} B in ROM "
            f"(+{e.cost_bytes:,} B)" for e in expansions]


def budget_note(plan: Plan) -> str:
    """What the planning budget (counts of work, passes.plan_budget) or its wall-clock guard
    cut short (empty when nothing was)."""
    info = plan.planning_time_budget
    cut = info.get("exhausted") or []
    if not cut:
        if info.get("fallback") == "classic":
            return ("; the classic plan (--inplace-ops off --tiling off) is smaller here "
                    "and is kept")
        return ""
    clock = info.get("wall_clock_guard") or []
    counted = [c for c in cut if c not in clock]
    note = ""
    if counted:
        note = (f"; plan budget ({info.get('seconds'):g} s of work) exhausted in "
                f"{', '.join(counted)}: best plan found so far kept")
    if clock:
        note += (f"; the time guard stopped {', '.join(clock)} (machine too slow: "
                 "planning CPU time past the guard): best plan found so far kept, it "
                 "depends on the machine")
    if info.get("fallback") == "classic":
        note += " (the classic plan, smaller)"
    return note + " (--plan-budget SECONDS to search longer)"


def below_bound_lines(plan: Plan) -> list[str]:
    """What took the arena below the per-op bound: folds, in-place ops, overlaps, tiling."""
    lines: list[str] = []
    pads = sum(1 for f in plan.fusions if f.kind == "pad")
    if pads:
        lines.append(f"  PAD folded: {pads} pad(s) became the next window op's implicit "
                     "padding (padded tensor never stored)")
    kinds: dict[str, int] = {}
    for e in plan.inplace_ops:
        key = e.kind if e.kind != "rows" else f"rows-{e.direction}"
        kinds[key] = kinds.get(key, 0) + 1
    if kinds.get("depthwise_channel"):
        lines.append(f"  in place: {kinds['depthwise_channel']} depthwise conv(s) over their "
                     "input with a scratch of 4 channels")
    rows = kinds.get("rows-forward", 0) + kinds.get("rows-backward", 0)
    if rows:
        lines.append(f"  row by row: {rows} op(s) write their output over the rows of a dying "
                     f"input ({kinds.get('rows-forward', 0)} forward, "
                     f"{kinds.get('rows-backward', 0)} backward)")
    if kinds.get("concat_slice"):
        lines.append(f"  concatenation: {kinds['concat_slice']} input(s) written straight into "
                     f"their slice ({kinds.get('concat_views', 0)} concatenation(s) copy less)")
    used = sum(1 for o in plan.overlaps if o.mode != "disjoint")
    if plan.overlaps:
        lines.append(f"  overlapping buffers: {used} of {len(plan.overlaps)} permitted "
                     "overlap(s) used, each verified against its op's access pattern")
    for n, st in enumerate(plan.stages):
        patches = st.grid[0] * st.grid[1]
        extra = st.macs - st.base_macs
        lines.append(
            f"  tiled stage {n}: ops {st.ops[0]}..{st.ops[-1]} ({len(st.ops)} ops, split "
            f"after op {st.ops[-1]}), {patches} patches ({st.grid[0]}x{st.grid[1]}, "
            f"{'raster' if st.order == 'forward' else 'reverse raster'} order)")
        sizes = [t.size for t in st.tiles if t.size]
        lines.append(f"    {len(sizes)} tile buffer(s), largest {_kb(max(sizes, default=0))} B; "
                     f"extra MACs {_kb(extra)} "
                     f"(+{100 * extra / max(plan.base_macs, 1):.1f} % of the model's "
                     f"{_kb(plan.base_macs)})")
        if st.model_instructions:
            lines.append(f"    estimated extra instructions {_kb(st.extra_instructions)} "
                         f"(+{100 * st.extra_instructions / st.model_instructions:.1f} % of "
                         f"the model's {_kb(st.model_instructions)}, Cortex-M7 cost model)")
    if plan.arena_bytes < plan.lower_bound_bytes:
        lines.append(f"  arena {_kb(plan.arena_bytes)} B is "
                     f"{100 * (1 - plan.arena_bytes / plan.lower_bound_bytes):.1f} % below "
                     "the op bound")
    return lines


def op_table(plan: Plan, graph: Graph, max_rows: int | None = None) -> list[str]:
    """One row per scheduled op; the peak row is marked with '<- peak'."""
    peak = max((s.live_bytes for s in plan.steps), default=0)
    rows = [f"{'pos':>4} {'op':>4} {'opcode':<20} {'live B':>11} {'scratch':>8}  outputs"]
    steps = list(plan.steps)
    shown = steps
    if max_rows is not None and len(steps) > max_rows:
        # keep the peak neighbourhood and the ends visible
        k = next(i for i, s in enumerate(steps) if s.live_bytes == peak)
        keep = set(range(0, 3)) | set(range(len(steps) - 3, len(steps)))
        keep |= set(range(max(0, k - max_rows // 2 + 3), min(len(steps), k + max_rows // 2 - 3)))
        shown = [s for i, s in enumerate(steps) if i in keep]
    last_i = -1
    for s in shown:
        if s.position != last_i + 1 and last_i >= 0:
            rows.append(f"{'...':>4}")
        last_i = s.position
        op = graph.op_by_index[s.op]
        outs = ", ".join(f"t{t}{list(graph.tensors[t].shape)}"
                         + (f" {name}" if (name := layer_name(graph.tensors[t].name)) else "")
                         for t in op.outputs)
        mark = "  <- peak" if s.live_bytes == peak else ""
        rows.append(f"{s.position:>4} {s.op:>4} {s.opcode:<20} {s.live_bytes:>11,} "
                    f"{s.scratch_bytes:>8,}  {outs}{mark}")
    return rows


def _ops_list(ops: list[int], opcodes: dict[int, str]) -> str:
    return ", ".join(f"op {o} ({opcodes.get(o, '?')})" for o in ops) or "none"


def swap_summary(swap: SwapPlan) -> list[str]:
    """Out-of-core execution (``Plan.swap``): where the weights live, chunks, staging,
    predicted slowdown against all weights internal, the I/O-bound layers."""
    mode, alg = swap.mode, swap.algorithm
    budget = swap.internal_budget_bytes
    fits = "fits" if swap.fits_internal_flash else "OVER"
    budget_txt = (f" (internal budget {_kb(budget)} B: flash - code reserve - requant "
                  f"tables -> {fits})" if budget >= 0 else "")
    if not swap.enabled:
        return [f"  swap ({mode}): nothing streams; weights internal "
                f"{_kb(swap.internal_weight_bytes)} B{budget_txt}"]
    cost = swap.cost
    opcodes = {t.op: t.opcode for t in swap.tensors}
    opcodes.update({o.op: o.opcode for o in cost.ops})
    kept_io = [t.op for t in swap.tensors
               if t.pool != "external" and t.io_bound_if_streamed]
    lines = [
        f"  swap ({mode}, {alg}, external {swap.external_kind}"
        + (f" {swap.device}, the external flash too small" if swap.device else "") + "): "
        f"{_kb(swap.external_weight_bytes)} B of weights stream in "
        f"{swap.chunk_count} chunks, {_kb(swap.internal_weight_bytes)} B stay "
        f"internal{budget_txt}",
        f"    staging 2 x {_kb(swap.staging_buffer_bytes)} B in {swap.staging_region}"
        f" ({'fits' if swap.fits_staging else 'does NOT fit'} its "
        f"{_kb(swap.staging_budget_bytes)} B); swap RAM {_kb(swap.sram_bytes)} B "
        + ("(staging, chunk table, crypto state)" if not swap.table_on_demand else
           f"(staging, two table entries: the {swap.chunk_count}-entry table is read on "
           "demand, crypto state)"),
        f"    predicted latency vs all weights internal: x{swap.predicted_slowdown:.3f} "
        f"with prefetch (x{cost.serial_slowdown:.3f} without); "
        f"{cost.baseline_ms:.2f} -> {cost.overlap_ms:.2f} ms, decryption "
        f"{cost.decrypt_ms:.2f} ms, flash stall {cost.stall_ms:.2f} ms",
        f"    I/O-bound layers (weight delivery slower than their compute): streamed: "
        f"{_ops_list(list(cost.io_bound_ops), opcodes)}; kept internal: "
        f"{_ops_list(kept_io, opcodes)}",
    ]
    lines += [f"    note: {n}" for n in swap.notes]
    return lines


def swap_table(swap: SwapPlan) -> list[str]:
    """One row per streamed op: chunks, bytes, and the cost model's times."""
    rows = [f"{'op':>4} {'opcode':<20} {'chunks':>6} {'weights B':>10} {'read us':>9} "
            f"{'decrypt us':>10} {'compute us':>10} {'stall us':>9}  io-bound"]
    for o in swap.cost.ops:
        rows.append(f"{o.op:>4} {o.opcode:<20} {o.chunks:>6} {o.weight_bytes:>10,} "
                    f"{o.read_us:>9.1f} {o.decrypt_us:>10.1f} {o.compute_us:>10.1f} "
                    f"{o.stall_us:>9.1f}  {'yes' if o.io_bound else 'no'}")
    return rows
