#!/usr/bin/env python3
"""nnopt's memory planner against TensorFlow Lite Micro's, on every model in a folder.

For each ``*.tflite`` under MODELS_DIR (default: $NNOPT_MODELS or ../shared/models next
to the repository), in one run:

- **TFLM head**: the non-persistent ("head") part of TFLM's tensor arena, i.e. what
  its GreedyMemoryPlanner planned for activations and kernel scratch buffers. Measured
  with the ``tflite-micro`` Python interpreter (RecordingMicroAllocator): the model is
  loaded into a generously sized arena (the head does not depend on the arena size)
  and ``print_allocations()`` reports "Arena allocation head N bytes". Each model runs
  in its own child process: the report is printed by C code on the process's stderr,
  and a crash in TFLM cannot take the benchmark down.
- **file-order peak**: the largest live sum (bytes of simultaneously live activation
  tensors) in the model's own operator order.
- **nnopt peak / arena**: nnopt's live-sum peak after reordering, fusion and in-place
  execution, and the arena its offset planner needs for it (what firmware allocates).
- **op bound**: the largest inputs+outputs of a single op on the model as imported; no
  order and no offset plan goes below it, only fusion and in-place execution can.
- **order**: "optimal" when the schedule search proved its order optimal under the
  live-sum model, else the gap to its best lower bound.
- **scratch**: kernel scratch reserved in nnopt's arena; "n/a" when the model uses an
  operator nnopt has no kernel for yet, then it is planned without kernel checks (so
  without scratch; TFLM's head includes its kernels' scratch).

- **classic / default time**: planning time of the classic plan (``--inplace-ops off
  --tiling off``) and of the commands' default plan (``auto``/``auto``, under the
  default planning time budget), side by side: wall time, and the default / classic
  ratio of CPU time (``time.process_time``: the planner is single-threaded, and on a
  shared machine other processes inflate wall time unevenly), with both arenas and
  whether the budget cut a search short; a model the frontend cannot import shows
  "unsupported". A model with operators nnopt has no definition for yet (family
  models whose operators are not covered yet) is imported with
  ``load_model(path, unsupported="plan")``: those operators become generic ops (file
  shapes and dtypes, no traits) and the row is
  marked "planned without kernels".
- **scaling**: synthetic graphs of 1,000, 3,000 and 10,000 ops (cells of element-wise
  ops with skip connections, built with the tests' TFLite model builder) planned both
  ways, and the growth exponent of planning time against ops fitted over every row
  and over the synthetic rows alone (least squares of log time on log ops).

Output: one Markdown table (paste into README) and a verdict line naming every model
whose nnopt arena is larger than TFLM's head; ``--json PATH`` (``-`` for stdout)
writes the same rows for machines. Exit status 0, or 1 if a model could not be planned.

    python benchmarks/bench_planner.py [MODELS_DIR] [--json out.json] [--no-tflm]

Run it with the Python that has nnopt installed (``pip install -e .[dev]``; tflite-micro
is a dev dependency).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from common import add_models_arguments, model_files, tflm_head, tflm_worker, write_json

import nnopt
from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model
from nnopt.ir import Graph
from nnopt.ops import SUPPORTED_OPS
from nnopt.passes.plan_budget import DEFAULT_PLAN_BUDGET_S
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.tflite_builder import ModelBuilder


@dataclass
class Row:
    model: str
    path: str
    ops: int
    tflm_head: int | None
    file_order_peak: int
    nnopt_peak: int
    nnopt_arena: int
    op_bound: int
    optimal: bool
    gap_bytes: int  # 0 when optimal
    schedule_strategy: str
    arena_strategy: str
    scratch_bytes: int | None  # None: planned without kernel checks
    plan_seconds: float
    tflm_error: str | None = None
    default_arena: int | None = None  # the commands' default plan (inplace/tiling auto)
    default_seconds: float | None = None
    # CPU time of the planning process (time.process_time) for both plans: the work
    # itself, which other processes on a loaded machine do not inflate as they do wall
    # time; the default / classic ratio is taken from these
    plan_cpu_seconds: float = 0.0
    default_cpu_seconds: float | None = None
    budget_exhausted: tuple[str, ...] = ()  # searches the default plan's budget cut
    unsupported: str | None = None  # the frontend could not import the model
    # operators without an nnopt definition, imported as generic ops (planned without
    # kernels: load_model(..., unsupported="plan"))
    generic_ops: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        if not self.tflm_head:
            return None
        return self.nnopt_arena / self.tflm_head


# ----- nnopt -----

def _timed(graph: Graph, opts: PlanOptions) -> tuple[PlannedModel, float, float]:
    """The plan, its wall time and its CPU time."""
    t0, c0 = time.perf_counter(), time.process_time()
    pm = plan_model(graph, opts)
    return pm, time.perf_counter() - t0, time.process_time() - c0


def plan_row(path: Path, root: Path, schedule_budget_s: float,
             plan_budget_s: float | None = DEFAULT_PLAN_BUDGET_S) -> Row:
    rel = os.fspath(path.relative_to(root))
    generic: tuple[str, ...] = ()
    try:
        graph = load_model(path)
    except UnsupportedError:
        # operators nnopt has no definition for yet: planned as generic ops, without
        # kernels (a planning study; the commands refuse the model)
        try:
            graph = load_model(path, unsupported="plan")
        except NnoptError as err:
            return unsupported_row(path.stem, rel, str(err))
        generic = tuple(sorted({op.opcode for op in graph.ops} - SUPPORTED_OPS))
    except NnoptError as err:
        return unsupported_row(path.stem, rel, str(err))
    row = graph_row(graph, path.stem, rel, schedule_budget_s, plan_budget_s)
    row.generic_ops = generic
    return row


def unsupported_row(name: str, rel: str, why: str) -> Row:
    return Row(model=name, path=rel, ops=0, tflm_head=None, file_order_peak=0,
               nnopt_peak=0, nnopt_arena=0, op_bound=0, optimal=False, gap_bytes=0,
               schedule_strategy="", arena_strategy="", scratch_bytes=None,
               plan_seconds=0.0, unsupported=why.splitlines()[0][:160])


def graph_row(graph: Graph, name: str, rel: str, schedule_budget_s: float,
              plan_budget_s: float | None = DEFAULT_PLAN_BUDGET_S) -> Row:
    """The classic and the default plan of one graph, timed in the same run."""
    base = PlanOptions(schedule_time_budget_s=schedule_budget_s, plan_budget_s=plan_budget_s)
    try:
        pm, seconds, cpu = _timed(graph, base)
        scratch: int | None = sum(s.size for s in pm.plan.scratch)
    except UnsupportedError:
        base = replace(base, check_kernels=False)
        pm, seconds, cpu = _timed(graph, base)
        scratch = None
    dm, dsec, dcpu = _timed(graph, replace(base, inplace_ops="auto", tiling="auto"))
    plan = pm.plan
    gap = 0 if plan.optimal else max(0, plan.peak_live_bytes_unfused
                                     - plan.schedule_lower_bound_bytes)
    return Row(
        model=name, path=rel, ops=len(graph.ops),
        tflm_head=None, file_order_peak=plan.peak_live_bytes_file_order,
        nnopt_peak=plan.peak_live_bytes, nnopt_arena=plan.arena_bytes,
        op_bound=plan.lower_bound_bytes, optimal=plan.optimal, gap_bytes=gap,
        schedule_strategy=plan.schedule_strategy, arena_strategy=plan.arena_strategy,
        scratch_bytes=scratch, plan_seconds=round(seconds, 3),
        default_arena=dm.plan.arena_bytes, default_seconds=round(dsec, 3),
        plan_cpu_seconds=round(cpu, 3), default_cpu_seconds=round(dcpu, 3),
        budget_exhausted=tuple(dm.plan.planning_time_budget.get("exhausted", ())),
    )


# ----- synthetic graphs -----

SYNTHETIC_OPS = (1000, 3000, 10000)
SYNTHETIC_PATH = "(synthetic)"  # the path column of their rows


def synthetic_model(n_ops: int) -> bytes:
    """``n_ops`` int8 element-wise ops in cells of four (ADD, MUL, ADD, AVERAGE_POOL
    keeping the shape), each cell also reading the outputs of one and of three cells
    before: a branched graph whose live sets stay small as it grows, like the unrolled
    recurrent and NASNet-style graphs of issue 18."""
    b = ModelBuilder(f"synthetic_{n_ops}")

    def t(shape: tuple[int, ...]) -> int:
        return b.tensor(shape, "int8", scale=0.05, zero_point=0)

    shape = (1, 8, 8, 8)
    x = t(shape)
    outs = [x]
    ops = 0
    while ops < n_ops:
        h = outs[-1]
        skip1 = outs[-2] if len(outs) > 1 else h
        skip3 = outs[-4] if len(outs) > 3 else h
        a = t(shape)
        b.op("ADD", [h, skip1], [a])
        m = t(shape)
        b.op("MUL", [a, h], [m])
        c = t(shape)
        b.op("ADD", [m, skip3], [c])
        p = t(shape)
        b.op("AVERAGE_POOL_2D", [c], [p], {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                                          "filter_width": 3, "filter_height": 3})
        ops += 4
        outs.append(p)
    return b.build([x], [outs[-1]])


def synthetic_rows(schedule_budget_s: float, plan_budget_s: float | None,
                   sizes: tuple[int, ...] = SYNTHETIC_OPS) -> list[Row]:
    from nnopt.frontend.tflite import load_model_bytes

    rows = []
    for n in sizes:
        print(f"bench_planner: synthetic {n} ops", file=sys.stderr, flush=True)
        graph = load_model_bytes(synthetic_model(n))
        rows.append(graph_row(graph, f"synthetic_{n}", SYNTHETIC_PATH, schedule_budget_s,
                              plan_budget_s))
    return rows


def growth_exponent(rows: list[Row], attr: str) -> float | None:
    """Least-squares slope of log(seconds) on log(ops): time ~ ops ** exponent."""
    pts = [(math.log(r.ops), math.log(max(getattr(r, attr), 1e-4))) for r in rows
           if r.ops >= 20 and getattr(r, attr) is not None and r.unsupported is None]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / sxx


# ----- output -----

def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def markdown(rows: list[Row]) -> list[str]:
    head = ["model", "ops", "TFLM head", "file-order peak", "nnopt peak", "nnopt arena",
            "op bound", "order", "scratch", "plan time", "arena / TFLM", "default arena",
            "default time", "default / classic CPU time"]
    align = ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---", "---:", "---:",
             "---:", "---:", "---:", "---:"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        if r.unsupported is not None:
            lines.append("| " + " | ".join([r.model] + ["unsupported"] + ["n/a"] * 12) + " |")
            continue
        order = "optimal" if r.optimal else f"gap <= {r.gap_bytes:,}"
        ratio = "n/a" if r.ratio is None else f"{r.ratio:.3f}"
        if r.ratio is not None and r.ratio > 1:
            ratio = f"**{ratio}**"
        dtime = "n/a" if r.default_seconds is None else f"{r.default_seconds:.2f} s"
        if r.budget_exhausted:
            dtime += " (budget: " + ", ".join(r.budget_exhausted) + ")"
        rel = ("n/a" if r.default_cpu_seconds is None
               else f"{r.default_cpu_seconds / max(r.plan_cpu_seconds, 1e-3):.1f}x "
               f"({r.default_cpu_seconds:.2f} / {r.plan_cpu_seconds:.2f} s)")
        name = f"{r.model} (planned without kernels)" if r.generic_ops else r.model
        lines.append("| " + " | ".join([
            name, str(r.ops), _n(r.tflm_head), _n(r.file_order_peak), _n(r.nnopt_peak),
            _n(r.nnopt_arena), _n(r.op_bound), order, _n(r.scratch_bytes),
            f"{r.plan_seconds:.2f} s", ratio, _n(r.default_arena), dtime, rel]) + " |")
    return lines


def scaling_lines(rows: list[Row]) -> list[str]:
    """The fitted growth exponents of planning time against ops: over every graph, and
    over the synthetic graphs alone (one family of graphs growing: how the planner
    scales, without the differences between real models)."""
    out = []
    synthetic = [r for r in rows if r.path == SYNTHETIC_PATH]
    for attr, name in (("plan_seconds", "classic"), ("default_seconds", "default"),
                       ("plan_cpu_seconds", "classic, CPU time"),
                       ("default_cpu_seconds", "default, CPU time")):
        for group, what in ((rows, "graphs of >= 20 ops"), (synthetic, "synthetic graphs")):
            e = growth_exponent(group, attr)
            n = sum(1 for r in group if r.unsupported is None and r.ops >= 20)
            out.append(f"planning time ~ ops^{e:.2f} ({name} plan, least squares over {n} "
                       f"{what})" if e is not None else f"{name}, {what}: too few rows to fit")
    return out


def verdict(rows: list[Row]) -> list[str]:
    compared = [r for r in rows if r.ratio is not None]
    worse = [r for r in compared if r.ratio is not None and r.ratio > 1]
    lines = []
    if compared:
        geo = math.exp(sum(math.log(r.ratio) for r in compared if r.ratio) / len(compared))
        total_n = sum(r.nnopt_arena for r in compared)
        total_t = sum(r.tflm_head or 0 for r in compared)
        lines.append(
            f"nnopt arena <= TFLM head on {len(compared) - len(worse)} of {len(compared)} "
            f"models; geometric mean arena / TFLM {geo:.3f}; total {total_n:,} B vs "
            f"{total_t:,} B ({100 * (total_n - total_t) / total_t:+.1f} %).")
    for r in worse:
        assert r.tflm_head is not None
        lines.append(f"LARGER THAN TFLM: {r.model}: nnopt arena {r.nnopt_arena:,} B vs TFLM "
                     f"head {r.tflm_head:,} B (+{r.nnopt_arena - r.tflm_head:,} B, "
                     f"+{100 * (r.nnopt_arena / r.tflm_head - 1):.1f} %).")
    for r in rows:
        if r.tflm_error:
            lines.append(f"TFLM could not plan {r.model}: {r.tflm_error}")
    for r in rows:
        if r.unsupported:
            lines.append(f"unsupported by the frontend: {r.model}: {r.unsupported}")
    slow = [r for r in rows if r.default_cpu_seconds is not None and r.unsupported is None
            and r.default_cpu_seconds > 3 * max(r.plan_cpu_seconds, 1.0)]
    for r in slow:
        lines.append(f"DEFAULT PLAN > 3x CLASSIC (CPU time): {r.model}: "
                     f"{r.default_cpu_seconds:.2f} s vs {r.plan_cpu_seconds:.2f} s")
    over = [r for r in rows if r.default_arena is not None and r.unsupported is None
            and r.default_arena > r.nnopt_arena]
    for r in over:
        lines.append(f"DEFAULT ARENA ABOVE CLASSIC: {r.model}: {r.default_arena:,} B vs "
                     f"{r.nnopt_arena:,} B")
    for r in rows:
        if r.generic_ops:
            lines.append(f"Planned without kernels: {r.model}: operators without an nnopt "
                         f"definition imported as generic ops ({', '.join(r.generic_ops)}).")
    without = [r.model for r in rows if r.scratch_bytes is None and r.unsupported is None
               and not r.generic_ops]
    if without:
        lines.append("Planned without kernel checks (no kernel scratch reserved; nnrt has no "
                     "kernel yet for an operator): " + ", ".join(without) + ".")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_models_arguments(p)
    p.add_argument("--no-tflm", action="store_true", help="skip the TFLM measurement")
    p.add_argument("--schedule-budget", type=float, default=10.0, metavar="SECONDS",
                   help="time for nnopt's exact order search per model (default 10)")
    p.add_argument("--plan-budget", type=float, default=DEFAULT_PLAN_BUDGET_S,
                   metavar="SECONDS", help="planning time budget per plan (default "
                   f"{DEFAULT_PLAN_BUDGET_S:g}, as the commands)")
    p.add_argument("--synthetic", type=int, nargs="*", default=list(SYNTHETIC_OPS),
                   metavar="OPS", help="sizes of the synthetic graphs (default "
                   "1000 3000 10000; none: --synthetic)")
    p.add_argument("--tflm-timeout", type=float, default=300.0, metavar="SECONDS",
                   help=argparse.SUPPRESS)
    p.add_argument("--tflm-worker", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tflm_worker:
        return tflm_worker(args.tflm_worker)

    root = args.models.resolve()
    models = model_files(root)
    if not models:
        print(f"bench_planner: no .tflite files under {root}", file=sys.stderr)
        return 1
    rows: list[Row] = []
    failed = 0
    for path in models:
        print(f"bench_planner: {path.relative_to(root)}", file=sys.stderr, flush=True)
        try:
            row = plan_row(path, root, args.schedule_budget, args.plan_budget)
        except NnoptError as err:
            print(f"bench_planner: {path.name}: {err}", file=sys.stderr)
            failed += 1
            continue
        if not args.no_tflm and row.unsupported is None:
            row.tflm_head, row.tflm_error = tflm_head(path, args.tflm_timeout)
        rows.append(row)

    rows += synthetic_rows(args.schedule_budget, args.plan_budget, tuple(args.synthetic))
    table = [*markdown(rows), "", *verdict(rows), *scaling_lines(rows)]
    if args.json != "-":
        print("\n".join(table))
    if args.json:
        synthetic = [r for r in rows if r.path == SYNTHETIC_PATH]
        doc: dict[str, Any] = {
            "nnopt": nnopt.__version__,
            "tflite_micro": _tflm_version(),
            "python": platform.python_version(),
            "models_dir": os.fspath(root),
            "schedule_budget_s": args.schedule_budget,
            "plan_budget_s": args.plan_budget,
            "growth_exponent": {"classic": growth_exponent(rows, "plan_seconds"),
                                "default": growth_exponent(rows, "default_seconds"),
                                "classic_cpu": growth_exponent(rows, "plan_cpu_seconds"),
                                "default_cpu": growth_exponent(rows, "default_cpu_seconds")},
            "growth_exponent_synthetic": {
                "classic_cpu": growth_exponent(synthetic, "plan_cpu_seconds"),
                "default_cpu": growth_exponent(synthetic, "default_cpu_seconds")},
            "rows": [asdict(r) | {"arena_over_tflm": r.ratio} for r in rows],
        }
        write_json(doc, args.json)
    return 1 if failed else 0


def _tflm_version() -> str | None:
    try:
        from tflite_micro.python.tflite_micro import _version
    except ImportError:
        return None
    return str(_version.__version__)


if __name__ == "__main__":
    sys.exit(main())
