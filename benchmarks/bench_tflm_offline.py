#!/usr/bin/env python3
"""TFLM's arena before and after ``nnopt optimize --emit tflite``, per model.

For each ``*.tflite`` under MODELS_DIR (default: $NNOPT_MODELS or ../shared/models next
to the repository): :func:`nnopt.tflm.emit.emit_tflite` (nnopt's order and offline plan,
the fallbacks, each measured with the stock tflite-micro Python interpreter, outputs
compared byte for byte) and one row: TFLM's smallest arena for the original and for the
model written, their ratio, the candidate chosen, and nnopt's planned head beside the
live-sum peaks under TFLM's lifetimes (file order, nnopt's order). Host figures
(64-bit). Usage: ``bench_tflm_offline.py [MODELS_DIR] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from nnopt.errors import NnoptError
from nnopt.tflm.emit import emit_tflite


def main() -> int:
    default = os.environ.get("NNOPT_MODELS") or str(
        Path(__file__).resolve().parents[2] / "shared" / "models")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="?", type=Path, default=Path(default))
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    paths = sorted(args.models.rglob("*.tflite"))
    if not paths:
        print(f"no .tflite under {args.models}", file=sys.stderr)
        return 1
    rows = []
    print("| model | TFLM before (B) | TFLM after (B) | after/before | written | "
          "nnopt head (B) | peak file / nnopt order (B) |")
    print("|---|---:|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            try:
                r = emit_tflite(p.read_bytes(), p.stem, Path(tmp))
            except NnoptError as e:
                print(f"| {p.stem} | - | - | - | error: {e} | - | - |", flush=True)
                rows.append({"model": p.stem, "error": str(e)})
                continue
            print(f"| {p.stem} | {r.arena_before:,} | {r.arena_after:,} | "
                  f"{r.arena_after / r.arena_before:.3f} | "
                  f"{r.chosen if r.path else 'nothing (' + r.chosen + ')'} | "
                  f"{r.planned_head:,} | {r.peak_file:,} / {r.peak:,} |", flush=True)
            rows.append({"model": p.stem, **r.to_json(), "path": None})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
