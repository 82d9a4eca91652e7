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

Output: one Markdown table (paste into README) and a verdict line naming every model
whose nnopt arena is larger than TFLM's head; ``--json PATH`` (``-`` for stdout)
writes the same rows for machines. Exit status 0, or 1 if a model could not be planned.

    python benchmarks/bench_planner.py [MODELS_DIR] [--json out.json] [--no-tflm]

Run it with the Python that has nnopt installed (``pip install -e .[dev]``; tflite-micro
is a dev dependency).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nnopt
from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model
from nnopt.paths import shared_models_dir
from nnopt.planner import PlanOptions, plan_model

REPO = Path(__file__).resolve().parents[1]

HEAD_RE = re.compile(r"Arena allocation head (\d+) bytes")
TFLM_ARENA_START = 32 * 1024 * 1024  # bytes; grown x4 on allocation failure
TFLM_ARENA_MAX = 1024 * 1024 * 1024


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

    @property
    def ratio(self) -> float | None:
        if not self.tflm_head:
            return None
        return self.nnopt_arena / self.tflm_head



# ----- TFLM (child process) -----

def tflm_worker(model: Path) -> int:
    """Child process: load the model into TFLM and print its allocation report."""
    from tflite_micro.python.tflite_micro import runtime

    arena = TFLM_ARENA_START
    while True:
        try:
            interpreter = runtime.Interpreter.from_file(os.fspath(model), arena_size=arena)
        except RuntimeError as err:
            if arena >= TFLM_ARENA_MAX:
                print(f"tflm: {err}", file=sys.stderr)
                return 1
            arena *= 4
            continue
        sys.stderr.flush()
        interpreter.print_allocations()  # C stdio, on this process's stderr
        return 0


def tflm_head(model: Path, timeout_s: float) -> tuple[int | None, str | None]:
    """TFLM's planned non-persistent arena bytes, or (None, reason)."""
    cmd = [sys.executable, os.fspath(Path(__file__).resolve()), "--tflm-worker",
           os.fspath(model)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout_s:.0f} s"
    m = HEAD_RE.search(proc.stderr)
    if proc.returncode == 0 and m:
        return int(m.group(1)), None
    last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    return None, last[:160]


# ----- nnopt -----

def plan_row(path: Path, root: Path, schedule_budget_s: float) -> Row:
    graph = load_model(path)
    t0 = time.perf_counter()
    try:
        pm = plan_model(graph, PlanOptions(schedule_time_budget_s=schedule_budget_s))
        scratch: int | None = sum(s.size for s in pm.plan.scratch)
    except UnsupportedError:
        t0 = time.perf_counter()
        pm = plan_model(graph, PlanOptions(check_kernels=False,
                                           schedule_time_budget_s=schedule_budget_s))
        scratch = None
    seconds = time.perf_counter() - t0
    plan = pm.plan
    gap = 0 if plan.optimal else max(0, plan.peak_live_bytes_unfused
                                     - plan.schedule_lower_bound_bytes)
    return Row(
        model=path.stem, path=os.fspath(path.relative_to(root)), ops=len(graph.ops),
        tflm_head=None, file_order_peak=plan.peak_live_bytes_file_order,
        nnopt_peak=plan.peak_live_bytes, nnopt_arena=plan.arena_bytes,
        op_bound=plan.lower_bound_bytes, optimal=plan.optimal, gap_bytes=gap,
        schedule_strategy=plan.schedule_strategy, arena_strategy=plan.arena_strategy,
        scratch_bytes=scratch, plan_seconds=round(seconds, 3),
    )


# ----- output -----

def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def markdown(rows: list[Row]) -> list[str]:
    head = ["model", "ops", "TFLM head", "file-order peak", "nnopt peak", "nnopt arena",
            "op bound", "order", "scratch", "plan time", "arena / TFLM"]
    align = ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---", "---:", "---:",
             "---:"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        order = "optimal" if r.optimal else f"gap <= {r.gap_bytes:,}"
        ratio = "n/a" if r.ratio is None else f"{r.ratio:.3f}"
        if r.ratio is not None and r.ratio > 1:
            ratio = f"**{ratio}**"
        lines.append("| " + " | ".join([
            r.model, str(r.ops), _n(r.tflm_head), _n(r.file_order_peak), _n(r.nnopt_peak),
            _n(r.nnopt_arena), _n(r.op_bound), order, _n(r.scratch_bytes),
            f"{r.plan_seconds:.2f} s", ratio]) + " |")
    return lines


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
    without = [r.model for r in rows if r.scratch_bytes is None]
    if without:
        lines.append("Planned without kernel checks (no kernel scratch reserved; nnrt has no "
                     "kernel yet for an operator): " + ", ".join(without) + ".")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="?", type=Path, default=shared_models_dir(),
                   help="folder searched recursively for *.tflite (default: %(default)s)")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON ('-': stdout "
                   "instead of the table)")
    p.add_argument("--no-tflm", action="store_true", help="skip the TFLM measurement")
    p.add_argument("--schedule-budget", type=float, default=10.0, metavar="SECONDS",
                   help="time for nnopt's exact order search per model (default 10)")
    p.add_argument("--tflm-timeout", type=float, default=300.0, metavar="SECONDS",
                   help=argparse.SUPPRESS)
    p.add_argument("--tflm-worker", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tflm_worker:
        return tflm_worker(args.tflm_worker)

    root = args.models.resolve()
    models = sorted(root.rglob("*.tflite"), key=lambda q: (q.parent.name, q.name))
    if not models:
        print(f"bench_planner: no .tflite files under {root}", file=sys.stderr)
        return 1
    rows: list[Row] = []
    failed = 0
    for path in models:
        print(f"bench_planner: {path.relative_to(root)}", file=sys.stderr, flush=True)
        try:
            row = plan_row(path, root, args.schedule_budget)
        except NnoptError as err:
            print(f"bench_planner: {path.name}: {err}", file=sys.stderr)
            failed += 1
            continue
        if not args.no_tflm:
            row.tflm_head, row.tflm_error = tflm_head(path, args.tflm_timeout)
        rows.append(row)

    table = [*markdown(rows), "", *verdict(rows)]
    if args.json != "-":
        print("\n".join(table))
    if args.json:
        doc: dict[str, Any] = {
            "nnopt": nnopt.__version__,
            "tflite_micro": _tflm_version(),
            "python": platform.python_version(),
            "models_dir": os.fspath(root),
            "schedule_budget_s": args.schedule_budget,
            "rows": [asdict(r) | {"arena_over_tflm": r.ratio} for r in rows],
        }
        text = json.dumps(doc, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    return 1 if failed else 0


def _tflm_version() -> str | None:
    try:
        from tflite_micro.python.tflite_micro import _version
    except ImportError:
        return None
    return str(_version.__version__)


if __name__ == "__main__":
    sys.exit(main())
