#!/usr/bin/env python3
"""Host inference speed: nnopt's generated code vs the tflite-micro interpreter.

One run, same machine, same inputs: for every model, the mean wall time of one
inference (ours: the harness times `invoke()` over repeated runs with CLOCK_MONOTONIC;
TFLM: `Interpreter.invoke()` timed in Python, which adds a few microseconds of call
overhead), their ratio, and our instruction count per inference from
`valgrind --tool=callgrind` (deterministic, whatever the machine load).

Usage: benchmarks/bench_host.py [MODELS_DIR] [--json PATH] [--no-callgrind] [-k SUBSTR]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from nnopt.frontend.tflite import load_model_bytes
from nnopt.inputs import random_inputs
from nnopt.paths import shared_models_dir
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import build_planned

_PER_INVOKE = re.compile(r"nnrt: ns_per_invoke=(\d+)")
_COLLECTED = re.compile(r"Collected : (\d+)")


def _tflm_seconds(data: bytes, inputs: list[np.ndarray], budget_s: float) -> float:
    from tflite_micro.python.tflite_micro import runtime

    graph = load_model_bytes(data)
    arena = sum(t.nbytes + 64 for t in graph.tensors if not t.is_constant) + (1 << 20)
    interp = runtime.Interpreter.from_bytes(data, arena_size=arena)
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()  # warm up
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < budget_s or len(times) < 3:
        t0 = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ours(exe: Path, inputs: list[np.ndarray], work: Path, budget_s: float,
          callgrind: bool) -> tuple[float, int | None]:
    args: list[str] = []
    for i, x in enumerate(inputs):
        p = work / f"in{i}.bin"
        p.write_bytes(x.tobytes())
        args += ["-i", str(p)]
    # one timed probe to size the repeat count to the time budget
    probe = subprocess.run([str(exe), *args, "-r", "1"], capture_output=True, text=True,
                           check=True)
    one = int(_PER_INVOKE.findall(probe.stdout + probe.stderr)[-1]) / 1e9
    repeat = max(3, min(10_000, int(budget_s / max(one, 1e-6))))
    runs = []
    for _ in range(3):
        res = subprocess.run([str(exe), *args, "-r", str(repeat)], capture_output=True,
                             text=True, check=True)
        runs.append(int(_PER_INVOKE.findall(res.stdout + res.stderr)[-1]) / 1e9)
    instructions = None
    if callgrind and shutil.which("valgrind"):
        res = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
             "--toggle-collect=*_invoke", str(exe), *args],
            capture_output=True, text=True, check=True)
        found = _COLLECTED.findall(res.stderr)
        instructions = int(found[-1]) if found else None
    return statistics.median(runs), instructions


def bench(models: list[Path], budget_s: float, callgrind: bool) -> list[dict[str, Any]]:
    rows = []
    for path in models:
        data = path.read_bytes()
        graph = load_model_bytes(data, name=path.stem)
        print(f"bench_host: {path.stem} ({len(graph.ops)} ops)", file=sys.stderr, flush=True)
        pm = plan_model(graph, PlanOptions(), source_bytes=data)
        inputs = random_inputs(graph, 0)
        with tempfile.TemporaryDirectory() as tmp:
            exe = build_planned(pm, "host", Path(tmp) / "gen")
            ours, instr = _ours(exe, inputs, Path(tmp), budget_s, callgrind)
        tflm = _tflm_seconds(data, inputs, budget_s)
        rows.append({"model": path.stem, "ops": len(graph.ops), "nnopt_us": ours * 1e6,
                     "tflm_us": tflm * 1e6, "speedup": tflm / ours,
                     "nnopt_instructions": instr})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| model | ops | nnopt µs/inference | TFLM interpreter µs | TFLM / nnopt | "
           "nnopt instructions (callgrind) |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        instr = f"{r['nnopt_instructions']:,}" if r["nnopt_instructions"] else "—"
        out.append(f"| {r['model']} | {r['ops']} | {r['nnopt_us']:,.0f} | {r['tflm_us']:,.0f} "
                   f"| {r['speedup']:.2f}× | {instr} |")
    ratios = [r["speedup"] for r in rows]
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        out.append("")
        out.append(f"nnopt faster than the TFLM interpreter on {sum(x > 1 for x in ratios)} of "
                   f"{len(ratios)} models; geometric mean speed-up {geo:.2f}×.")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="?", type=Path, default=shared_models_dir())
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("-k", dest="filter", default="", help="only models whose name contains this")
    ap.add_argument("--budget", type=float, default=0.3, help="seconds of timing per side")
    args = ap.parse_args()
    models = sorted(p for p in args.models.glob("**/*.tflite") if args.filter in p.stem)
    if not models:
        print(f"no models under {args.models}", file=sys.stderr)
        return 1
    rows = bench(models, args.budget, not args.no_callgrind)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
