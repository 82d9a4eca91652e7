"""The terminal summary of a plan: per-op table with live bytes and the peak marked."""

from __future__ import annotations

from ..ir import Graph
from ..plan import Plan


def _kb(n: int) -> str:
    return f"{n:,}"


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
    if plan.optimal:
        lines.append(f"  order: proven optimal under the live-sum model ({plan.schedule_strategy})")
    else:
        lb = plan.schedule_lower_bound_bytes
        lines.append(f"  order: {plan.schedule_strategy}, not proven optimal; within "
                     f"{_kb(plan.peak_live_bytes_unfused - lb)} B of the best bound {_kb(lb)} B")
    if plan.fusions:
        lines.append(f"  fused: {len(plan.fusions)} max-pool(s) into their convolution "
                     "(full conv output never stored)")
    if plan.inplace:
        lines.append(f"  in place: {len(plan.inplace)} element-wise op(s) overwrite a dying input")
    if plan.sram_budget_bytes is not None:
        where = f"board {plan.board}" if plan.board else "--sram"
        ok = plan.arena_bytes <= plan.sram_budget_bytes
        lines.append(f"  budget ({where}): {_kb(plan.sram_budget_bytes)} B -> "
                     + ("fits" if ok
                        else f"OVER by {_kb(plan.arena_bytes - plan.sram_budget_bytes)} B")
                     + f" ({100 * plan.arena_bytes / max(plan.sram_budget_bytes, 1):.1f} % used)")
    lines.append(f"  planned in {plan.planning_seconds:.2f} s")
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
        outs = ", ".join(f"t{t}{list(graph.tensors[t].shape)}" for t in op.outputs)
        mark = "  <- peak" if s.live_bytes == peak else ""
        rows.append(f"{s.position:>4} {s.op:>4} {s.opcode:<20} {s.live_bytes:>11,} "
                    f"{s.scratch_bytes:>8,}  {outs}{mark}")
    return rows
