#!/usr/bin/env python3
"""Static memory plan against the defragmenting dynamic allocator, per model.

For each ``*.tflite`` under MODELS_DIR (default: $NNOPT_MODELS or ../shared/models next
to the repository), with the same schedule (nnopt's optimal order, fusion, in-place):

- **static arena**: nnopt's offset plan of whole tensors (best of its strategies), the
  plan the dynamic modes run; **below bound**: the static plan with in-place window ops
  and tiling (``--inplace-ops auto --tiling auto``, the CLI default for the static
  allocator), which places parts of tensors over each other: nothing a whole-tensor
  allocator can do;
- **greedy arena**: the offset plan of TFLM's greedy-by-size strategy alone, for
  reference: what a fragmenting offset planner needs for the same lifetimes;
- **dynamic arena**: the dynamic allocator's high-water mark (aligned live-sum
  peak), measured on the host by the generated code (``NNRT_TRACE`` statistics record)
  and checked equal to the prediction of :mod:`nnopt.passes.dynamic`; plus its
  handle tables (SRAM outside the arena);
- **bytes moved**: bytes copied by compaction per inference (measured, equal to the
  prediction), and compactions that moved something;
- **lazy**: the same for ``--allocator dynamic-lazy`` (compaction only when an
  allocation needs room; same arena): bytes moved, measured and predicted alike;
- **instructions**: per inference on QEMU Cortex-M7 (``mps2-an500``, ``-icount``; the
  harness counts around ``invoke()``), static, dynamic and dynamic-lazy builds of the
  same plan, and the dynamic modes' overhead in percent. Only for models that fit
  nucleo_f767zi (arena in SRAM, weights in flash); "n/a" otherwise or with ``--no-qemu``;
- **blob**: the same plan as a model blob run by nnrt's loader (``nnrt/loader.h``,
  eager compaction) on QEMU M7, and its cost over the generated dynamic code: the
  interpreter's decoding and checks per op ("n/a": an op the blob format lacks, or the
  harness, which reads the blob into SRAM, does not fit the board with it).

Output: a Markdown table and summary lines; ``--json PATH`` (``-`` for stdout) writes the
rows for machines. Exit status 1 if a model failed (a mismatch between measured and
predicted figures is a failure).

    python benchmarks/bench_allocator.py [MODELS_DIR] [--json out.json] [--no-qemu]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from common import add_models_arguments, model_files, write_json

import nnopt
from nnopt.blob.writer import write_blob
from nnopt.boards import load_board
from nnopt.errors import NnoptError, ToolchainError, UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.inputs import random_inputs
from nnopt.passes.dynamic import dynamic_plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model, with_dynamic
from nnopt.runner import run_planned
from nnopt.testing.blob import run_blob

BOARD = "nucleo_f767zi"
CODE_RESERVE = 64 * 1024  # flash kept for code when deciding whether a model fits


@dataclass
class Row:
    model: str
    ops: int
    static_arena: int
    greedy_arena: int
    dynamic_arena: int
    table_bytes: int
    bytes_moved: int
    compactions: int
    measured_high_water: int
    measured_bytes_moved: int
    instr_static: int | None
    instr_dynamic: int | None
    lazy_bytes_moved: int = 0
    instr_lazy: int | None = None
    below_bound_arena: int | None = None
    instr_blob: int | None = None

    @property
    def overhead(self) -> float | None:
        if not self.instr_static or self.instr_dynamic is None:
            return None
        return 100.0 * (self.instr_dynamic - self.instr_static) / self.instr_static

    @property
    def blob_overhead(self) -> float | None:
        if not self.instr_dynamic or self.instr_blob is None:
            return None
        return 100.0 * (self.instr_blob - self.instr_dynamic) / self.instr_dynamic

    @property
    def lazy_overhead(self) -> float | None:
        if not self.instr_static or self.instr_lazy is None:
            return None
        return 100.0 * (self.instr_lazy - self.instr_static) / self.instr_static


def measure(path: Path, qemu: bool) -> Row:
    data = path.read_bytes()
    graph = load_model_bytes(data, name=path.stem)
    board = load_board(BOARD)
    pm = plan_model(graph, PlanOptions(board=board), source_bytes=data)
    plan = pm.plan
    greedy = plan_model(graph, PlanOptions(arena_strategies=("greedy_by_size",))).plan
    below = plan_model(graph, PlanOptions(board=board, inplace_ops="auto", tiling="auto")).plan
    dyn = dynamic_plan(pm.graph, plan)
    lazy = dynamic_plan(pm.graph, plan, lazy=True)
    inputs = [x.tobytes() for x in random_inputs(pm.graph, 0)]

    static_host = run_planned(pm, inputs, target="host")
    stats: dict[str, int] = {}
    for mode, pred in (("dynamic", dyn), ("dynamic-lazy", lazy)):
        host = run_planned(pm, inputs, target="host", trace=True, allocator=mode)
        got = host.allocator_stats or {}
        if (got.get("high_water"), got.get("bytes_moved")) != (pred.high_water,
                                                              pred.bytes_moved):
            raise NnoptError(f"{path.stem} ({mode}): measured {got}, predicted high "
                             f"water {pred.high_water} and {pred.bytes_moved} bytes moved")
        if static_host.outputs != host.outputs:
            raise NnoptError(f"{path.stem}: static and {mode} outputs differ")
        stats = stats or got

    instr_s = instr_d = instr_l = instr_b = None
    flash = sum(r.size for r in board.rom_regions)
    fits = plan.arena_bytes <= board.sram_bytes and plan.weight_bytes + CODE_RESERVE <= flash
    if qemu and fits:
        rs = run_planned(pm, inputs, target="qemu-m7", board=board)
        rd = run_planned(pm, inputs, target="qemu-m7", board=board, allocator="dynamic")
        rl = run_planned(pm, inputs, target="qemu-m7", board=board,
                         allocator="dynamic-lazy")
        if not rs.outputs == rd.outputs == rl.outputs:
            raise NnoptError(f"{path.stem}: static and dynamic outputs differ on QEMU")
        instr_s, instr_d, instr_l = rs.instructions, rd.instructions, rl.instructions
        instr_b = blob_instructions(pm, inputs, rd.outputs, len(graph.outputs))
    return Row(path.stem, len(pm.graph.ops), plan.arena_bytes, greedy.arena_bytes,
               dyn.arena_bytes, dyn.table_bytes, dyn.bytes_moved, dyn.compactions,
               stats["high_water"], stats["bytes_moved"], instr_s, instr_d,
               lazy.bytes_moved, instr_l, below.arena_bytes, instr_b)


def blob_instructions(pm: PlannedModel, inputs: list[bytes], expect: list[bytes],
                      n_outputs: int) -> int | None:
    """Instructions of one inference of the model blob on QEMU M7, or None when the blob
    format lacks an op. Outputs must equal the generated code's."""
    try:
        blob = write_blob(with_dynamic(pm))
    except UnsupportedError:
        return None
    with tempfile.TemporaryDirectory(prefix="bench-blob-") as tmp:
        try:
            res = run_blob(blob, inputs, n_outputs, Path(tmp), target="qemu-m7")
        except ToolchainError:  # the runner holds the blob in SRAM: too big for the board
            return None
    if res.exit_code != 0 or res.outputs != expect:
        raise NnoptError(f"{pm.plan.model}: the blob failed or differs: {res.text[-300:]}")
    return None if res.instructions is None else int(res.instructions)


def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def markdown(rows: list[Row]) -> list[str]:
    head = ["model", "ops", "static arena", "below bound", "greedy arena", "dynamic arena",
            "handle tables", "bytes moved", "moved / arena", "compactions", "moved (lazy)",
            "instr. static (M7)", "instr. dynamic (M7)", "overhead", "overhead (lazy)",
            "blob vs dynamic"]
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        ov = "n/a" if r.overhead is None else f"{r.overhead:+.2f} %"
        lov = "n/a" if r.lazy_overhead is None else f"{r.lazy_overhead:+.2f} %"
        bov = "n/a" if r.blob_overhead is None else f"{r.blob_overhead:+.2f} %"
        lines.append("| " + " | ".join([
            r.model, str(r.ops), _n(r.static_arena), _n(r.below_bound_arena),
            _n(r.greedy_arena), _n(r.dynamic_arena), _n(r.table_bytes), _n(r.bytes_moved),
            f"{r.bytes_moved / max(r.dynamic_arena, 1):.1f}x", str(r.compactions),
            _n(r.lazy_bytes_moved), _n(r.instr_static), _n(r.instr_dynamic), ov, lov,
            bov]) + " |")
    return lines


def summary(rows: list[Row]) -> list[str]:
    lines = []
    below = [r for r in rows if r.below_bound_arena is not None
             and r.below_bound_arena < r.dynamic_arena]
    same = sum(r.dynamic_arena == r.static_arena for r in rows)
    lines.append(f"dynamic arena == static arena on {same} of {len(rows)} models "
                 f"(the static plan reaches the aligned live peak there); dynamic < greedy "
                 f"offsets on {sum(r.dynamic_arena < r.greedy_arena for r in rows)}.")
    if below:
        lines.append(f"the static plan with in-place ops and tiling goes below the dynamic "
                     f"arena on {len(below)} of {len(rows)} models (parts of tensors placed "
                     "over each other: nothing a whole-tensor allocator can do).")
    timed = [r for r in rows if r.overhead is not None]
    if timed:
        ov = sorted(r.overhead for r in timed if r.overhead is not None)
        total_s = sum(r.instr_static or 0 for r in timed)
        total_d = sum(r.instr_dynamic or 0 for r in timed)
        lines.append(f"instruction overhead of the dynamic allocator on Cortex-M7 over "
                     f"{len(timed)} models: median {statistics.median(ov):+.2f} %, range "
                     f"{ov[0]:+.2f} % .. {ov[-1]:+.2f} %, all models together "
                     f"{100 * (total_d - total_s) / total_s:+.2f} % (tiny models pay the "
                     "fixed cost of init and handle lookups on a few thousand instructions).")
        lov = sorted(r.lazy_overhead for r in timed if r.lazy_overhead is not None)
        if lov:
            lines.append(f"dynamic-lazy: median {statistics.median(lov):+.2f} %, range "
                         f"{lov[0]:+.2f} % .. {lov[-1]:+.2f} %; bytes moved "
                         f"{sum(r.lazy_bytes_moved for r in rows):,} vs "
                         f"{sum(r.bytes_moved for r in rows):,} over all models.")
        bl = sorted(r.blob_overhead for r in timed if r.blob_overhead is not None)
        if bl:
            lines.append(f"model blob through the loader vs generated dynamic code: median "
                         f"{statistics.median(bl):+.2f} % over {len(bl)} models "
                         f"({bl[0]:+.2f} % .. {bl[-1]:+.2f} %).")
        per_byte = [(r.instr_dynamic - r.instr_static) / r.bytes_moved for r in timed
                    if r.instr_dynamic is not None and r.instr_static is not None
                    and r.bytes_moved > 10_000]
        if per_byte:
            lines.append(f"extra instructions per byte moved (models moving > 10 kB): "
                         f"median {statistics.median(per_byte):.2f}.")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_models_arguments(p)
    p.add_argument("--no-qemu", action="store_true", help="skip the QEMU instruction counts")
    p.add_argument("-k", metavar="TEXT", help="only models whose file name contains TEXT")
    args = p.parse_args(argv)
    root = args.models.resolve()
    models = model_files(root)
    if args.k:
        models = [m for m in models if args.k in m.name]
    if not models:
        print(f"bench_allocator: no .tflite files under {root}", file=sys.stderr)
        return 1
    rows: list[Row] = []
    failed = 0
    for path in models:
        print(f"bench_allocator: {path.relative_to(root)}", file=sys.stderr, flush=True)
        try:
            rows.append(measure(path, not args.no_qemu))
        except NnoptError as err:
            print(f"bench_allocator: {path.name}: {err}", file=sys.stderr)
            failed += 1
    table = [*markdown(rows), "", *summary(rows)]
    if args.json != "-":
        print("\n".join(table))
    if args.json:
        doc: dict[str, Any] = {
            "nnopt": nnopt.__version__, "python": platform.python_version(),
            "models_dir": os.fspath(root), "board": BOARD,
            "rows": [asdict(r) | {"overhead_percent": r.overhead,
                                  "lazy_overhead_percent": r.lazy_overhead,
                                  "blob_overhead_percent": r.blob_overhead} for r in rows],
        }
        write_json(doc, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
