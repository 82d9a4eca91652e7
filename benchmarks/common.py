#!/usr/bin/env python3
"""What the benchmarks share beyond nnopt itself (model locations:
:func:`nnopt.paths.shared_models_dir`, :func:`nnopt.paths.find_model`): TFLM's planned
arena for a model (measured in a child process, so a crash or a hang of the
interpreter costs one row, not the run); the models folder and ``--json`` arguments,
the models found under it, and writing the JSON document.

Each benchmark is a script run as ``python benchmarks/bench_<name>.py``; Python puts
this directory first on ``sys.path``, so they import this module as ``common``.
Benchmarks import nnopt and this module only: never the tests, never each other.
Run as a script (``common.py --tflm-worker MODEL``), it is the child of
:func:`tflm_head`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from nnopt.paths import shared_models_dir

HEAD_RE = re.compile(r"Arena allocation head (\d+) bytes")
TFLM_ARENA_START = 32 * 1024 * 1024  # bytes; grown x4 on allocation failure
TFLM_ARENA_MAX = 1024 * 1024 * 1024


def add_models_arguments(p: argparse.ArgumentParser) -> None:
    """A benchmark's ``models`` folder (the shared models by default) and ``--json``."""
    p.add_argument("models", nargs="?", type=Path, default=shared_models_dir(),
                   help="folder searched recursively for *.tflite (default: %(default)s)")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON ('-': stdout "
                   "instead of the table)")


def model_files(root: Path) -> list[Path]:
    """The .tflite files under ``root``, by folder name then file name."""
    return sorted(root.rglob("*.tflite"), key=lambda q: (q.parent.name, q.name))


def write_json(doc: dict[str, Any], dest: str) -> None:
    """``doc`` as indented JSON to ``dest`` ('-': stdout)."""
    text = json.dumps(doc, indent=1)
    if dest == "-":
        print(text)
    else:
        Path(dest).write_text(text + "\n")


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


def run_worker(script: Path, model: Path, pattern: str, timeout_s: float, *,
               stream: str = "stderr") -> tuple[int | None, str | None]:
    """Run ``script --tflm-worker MODEL`` (a benchmark's TFLM child process) and read the
    integer ``pattern`` captures from its ``stream``; (None, reason) when it fails."""
    cmd = [sys.executable, os.fspath(script), "--tflm-worker", os.fspath(model)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout_s:.0f} s"
    m = re.search(pattern, proc.stderr if stream == "stderr" else proc.stdout)
    if proc.returncode == 0 and m:
        return int(m.group(1)), None
    last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    return None, last[:160]


def tflm_head(model: Path, timeout_s: float) -> tuple[int | None, str | None]:
    """TFLM's planned non-persistent arena bytes, or (None, reason)."""
    return run_worker(Path(__file__).resolve(), model, HEAD_RE.pattern, timeout_s)

def ratio(a: int | None, b: int | None) -> float | None:
    """a / b, None when either is missing (or b is 0)."""
    return None if a is None or not b else a / b


def geomean(values: list[float]) -> float | None:
    """Geometric mean of positive values (None when there are none)."""
    vals = [v for v in values if v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--tflm-worker":
        sys.exit("usage: common.py --tflm-worker MODEL (the child of tflm_head())")
    sys.exit(tflm_worker(Path(sys.argv[2])))
