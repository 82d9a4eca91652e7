#!/usr/bin/env python3
"""Below the per-operator bound: nnopt's arena with in-place operators and tiling, side
by side with TensorFlow Lite Micro's head, on every model in a folder.

For each ``*.tflite`` under MODELS_DIR (default: $NNOPT_MODELS or ../shared/models next
to the repository), in one run:

- **TFLM head**: TFLM's planned non-persistent arena, measured with the ``tflite-micro``
  interpreter in a child process (the method of ``bench_planner.py``, reused here).
- **live-sum opt.**: the largest sum of simultaneously live tensors in nnopt's order
  (proven optimal over orders when the search says so): what any plan that keeps whole
  tensors apart needs at least.
- **op bound**: the largest (inputs + outputs) of one op: no order and no offset plan
  goes below it.
- **classic**: nnopt's arena without the techniques below (``--inplace-ops off
  --tiling off``).
- **in-place**: with PAD folding, in-place depthwise, concatenation slices and partial
  input/output overlap (``--inplace-ops auto --tiling off``).
- **tiled**: the default (``--inplace-ops auto --tiling auto``, at most 15 % extra
  MACs): adds the patch-based first stage; **stage** names its ops and patch grid and
  **extra MACs** the compute tiling adds (share of the model's MACs).

Every arena is what the generated firmware allocates (``NNRT_ARENA``, verified plans).
Output: a Markdown table, then the targets of issue 6 checked; ``--json PATH`` (``-``:
stdout) writes the rows. ``--max-extra-macs`` changes the tiling budget. ``--qemu-m7``
also runs the classic and the tiled firmware of every model that fits nucleo_f767zi
under QEMU (Cortex-M7) and reports instructions per inference: the time the memory
costs (kernel calls per row or patch, halo recompute, tile copies), not only the MACs.

    python benchmarks/bench_below_bound.py [MODELS_DIR] [--json out.json] [--no-tflm]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from common import tflm_head

from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model
from nnopt.paths import shared_models_dir
from nnopt.plan import Plan
from nnopt.planner import PlanOptions, plan_model

TARGETS = {  # model -> (what, bound in bytes or None for "below the live-sum optimum")
    "vww_96_int8": ("<= 50 % of TFLM's head", 0.5),
    "person_detect": ("<= 50 % of TFLM's head", 0.5),
    "mobilenet_v2_quantized_1x3x224x224": ("<= 320 KB", None),
    "densenet121_64": ("clearly below the live-sum optimum (<= 90 %)", None),
    "inception_v3_w025_75": ("clearly below the live-sum optimum (<= 90 %)", None),
}


@dataclass
class Row:
    model: str
    ops: int
    tflm_head: int | None
    live_sum: int
    optimal: bool
    op_bound: int
    classic: int
    inplace: int
    tiled: int
    stage: str
    extra_macs_pct: float
    macs: int
    plan_seconds: float
    kernels: bool  # False: planned without kernel checks (an op has no nnrt kernel)
    tflm_error: str | None = None
    instr_classic: int | None = None  # QEMU Cortex-M7 instructions per inference
    instr_inplace: int | None = None
    instr_tiled: int | None = None


def _plan(graph_path: Path, opts: PlanOptions) -> tuple[Plan, bool]:
    graph = load_model(graph_path)
    try:
        return plan_model(graph, opts).plan, True
    except UnsupportedError:
        return plan_model(graph, replace(opts, check_kernels=False)).plan, False


def plan_row(path: Path, max_extra: float, schedule_budget_s: float) -> Row:
    base = PlanOptions(schedule_time_budget_s=schedule_budget_s, max_extra_macs=max_extra)
    classic, ok = _plan(path, base)  # the live-sum optimum and op bound come from here
    i, _ = _plan(path, replace(base, inplace_ops="auto"))
    t0 = time.perf_counter()
    t, _ = _plan(path, replace(base, inplace_ops="auto", tiling="auto"))
    seconds = time.perf_counter() - t0
    stage = "-"
    if t.stages:
        st = t.stages[0]
        stage = f"{len(st.ops)} ops, {st.grid[0]}x{st.grid[1]}"
    return Row(
        model=path.stem, ops=len(classic.schedule), tflm_head=None,
        live_sum=classic.peak_live_bytes, optimal=classic.optimal,
        op_bound=classic.lower_bound_bytes, classic=classic.arena_bytes,
        inplace=i.arena_bytes, tiled=t.arena_bytes, stage=stage,
        extra_macs_pct=round(100.0 * (t.macs - t.base_macs) / max(t.base_macs, 1), 2),
        macs=t.macs, plan_seconds=round(seconds, 2), kernels=ok,
    )


def qemu_instructions(path: Path, max_extra: float
                      ) -> tuple[int | None, int | None, int | None]:
    """Instructions per inference of the classic, the in-place and the default (in-place
    and tiled) firmware on QEMU's Cortex-M7, planned without a budget like the table
    (None where the plan does not fit nucleo_f767zi)."""
    from nnopt.boards import load_board
    from nnopt.runner import run_planned
    from nnopt.testing.harness import random_inputs

    board = load_board("nucleo_f767zi")
    data = path.read_bytes()
    inputs = [x.tobytes() for x in random_inputs(data, 1)]
    out: list[int | None] = []
    for opts in (PlanOptions(), PlanOptions(inplace_ops="auto"),
                 PlanOptions(inplace_ops="auto", tiling="auto", max_extra_macs=max_extra)):
        graph = load_model(path)
        try:
            pm = plan_model(graph, opts, data)
        except UnsupportedError:
            return None, None, None
        if pm.plan.arena_bytes > board.sram_bytes or pm.plan.weight_bytes > 1_900_000:
            out.append(None)
            continue
        out.append(run_planned(pm, inputs, target="qemu-m7", board=board).instructions)
    return out[0], out[1], out[2]


def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def markdown(rows: list[Row]) -> list[str]:
    qemu = any(r.instr_classic is not None for r in rows)
    head = ["model", "TFLM head", "live-sum opt.", "op bound", "classic", "in-place",
            "tiled", "stage", "extra MACs", "tiled / TFLM", "tiled / live sum", "plan time"]
    head += ["M7 instr. classic", "in-place", "tiled"] if qemu else []
    lines = ["| " + " | ".join(head) + " |",
             "|---|" + "|".join(["---:"] * 6) + "|---|" + "|".join(["---:"] * 4) + "|"
             + ("---:|" * 3 if qemu else "")]
    for r in rows:
        ratio = "n/a" if not r.tflm_head else f"{r.tiled / r.tflm_head:.3f}"
        lines.append("| " + " | ".join([
            r.model + ("" if r.kernels else " *"), _n(r.tflm_head),
            _n(r.live_sum) + ("" if r.optimal else " (heur.)"), _n(r.op_bound),
            _n(r.classic), _n(r.inplace), _n(r.tiled), r.stage,
            f"{r.extra_macs_pct:+.1f} %", ratio, f"{r.tiled / max(r.live_sum, 1):.3f}",
            f"{r.plan_seconds:.1f} s", *(_instr(r) if qemu else [])]) + " |")
    return lines


def _instr(r: Row) -> list[str]:
    base = r.instr_classic

    def rel(x: int | None) -> str:
        if x is None:
            return "n/a"
        if base is None:
            return f"{x / 1e6:.2f} M"
        return f"{x / 1e6:.2f} M ({100 * (x / base - 1):+.1f} %)"

    return ["n/a" if base is None else f"{base / 1e6:.2f} M", rel(r.instr_inplace),
            rel(r.instr_tiled)]


def targets(rows: list[Row]) -> list[str]:
    by = {r.model: r for r in rows}
    out = []
    for model, (what, share) in TARGETS.items():
        r = by.get(model)
        if r is None:
            out.append(f"- {model}: not in this run")
            continue
        if share is not None:
            head = r.tflm_head
            ok = head is not None and r.tiled <= share * head
            detail = (f"{r.tiled:,} B vs TFLM head {_n(head)} B "
                      f"({100 * r.tiled / head:.1f} %)" if head else f"{r.tiled:,} B")
        elif model.startswith("mobilenet"):
            ok = r.tiled <= 320 * 1024
            detail = f"{r.tiled:,} B ({r.extra_macs_pct:+.1f} % MACs)"
        else:
            ok = r.tiled <= 0.9 * r.live_sum
            detail = (f"{r.tiled:,} B vs live-sum optimum {r.live_sum:,} B "
                      f"({100 * (r.tiled / r.live_sum - 1):+.1f} %)")
        out.append(f"- {model} {what}: {'MET' if ok else 'NOT MET'}: {detail}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="?", type=Path, default=shared_models_dir())
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--no-tflm", action="store_true", help="skip TFLM's head")
    p.add_argument("--max-extra-macs", type=float, default=15.0, metavar="PERCENT")
    p.add_argument("--schedule-budget", type=float, default=10.0, metavar="SECONDS")
    p.add_argument("--tflm-timeout", type=float, default=600.0, metavar="SECONDS")
    p.add_argument("--qemu-m7", action="store_true",
                   help="also count instructions per inference under QEMU (Cortex-M7) of "
                   "the classic, in-place and tiled plans")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="only the model with this file stem (repeatable)")
    args = p.parse_args(argv)
    paths = sorted(args.models.glob("**/*.tflite"))
    if args.only:
        paths = [q for q in paths if q.stem in set(args.only)]
    if not paths:
        print(f"no .tflite files under {args.models}", file=sys.stderr)
        return 1
    rows: list[Row] = []
    failed = False
    for path in paths:
        print(f"planning {path.name}", file=sys.stderr, flush=True)
        try:
            row = plan_row(path, args.max_extra_macs, args.schedule_budget)
        except NnoptError as err:
            print(f"  {path.name}: {err.message}", file=sys.stderr)
            failed = True
            continue
        if not args.no_tflm:
            row.tflm_head, row.tflm_error = tflm_head(path, args.tflm_timeout)
        if args.qemu_m7:
            row.instr_classic, row.instr_inplace, row.instr_tiled = qemu_instructions(
                path, args.max_extra_macs)
        rows.append(row)
    if args.json == "-":
        print(json.dumps([asdict(r) for r in rows], indent=1))
        return 1 if failed else 0
    print("\n".join(markdown(rows)))
    print()
    print("\n".join(targets(rows)))
    if any(not r.kernels for r in rows):
        print("\n* planned without kernel checks (an op has no nnrt kernel yet)")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
