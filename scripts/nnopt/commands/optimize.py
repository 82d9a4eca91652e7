"""``nnopt optimize``: plan a model, report memory, generate C sources.

A thin command: the arguments become a :class:`nnopt.driver.CompileRequest`, the
driver plans and writes, this prints the report and what was written."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import driver
from ..frontend.onnx import internal_layout, is_onnx
from ..passes.baseline import tflm_arena_bytes
from ..passes.dynamic import summary_lines
from ..planner import plan_model
from ..report.text import (
    expansion_lines,
    headline,
    op_table,
    summary,
    swap_summary,
    swap_table,
    why_lines,
)
from .common import (
    add_plan_arguments,
    compile_request,
    plan_options,
    planning_progress,
    progress,
    warn,
)

DESCRIPTION = """\
Plan a .tflite (or ONNX) model for a microcontroller and report its memory. The first
line is the answer: the arena, TFLM's for the same model, and whether it fits the
budget; then why (reordering, in place, tiling). With -o DIR, also write the generated
C (<name>_model.c/.h), the plan, the JSON report and the memory picture into DIR (and,
when weights stream from external flash, the sealed weight blob <name>_swap.bin).
Every term and option in full: docs/reading-the-report.md and docs/cli.md."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("optimize", help="plan a model, report memory, generate C",
                       description=DESCRIPTION, usage="%(prog)s MODEL [options]",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, metavar="MODEL",
                   help="MODEL.tflite, or MODEL.onnx (recognised by content)")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--out", "--output-dir", dest="out", type=Path, metavar="DIR",
                   help="write the generated C, plan, JSON report and picture into DIR")
    o.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    o.add_argument("--plot", type=Path, metavar="PATH",
                   help="write the memory picture here (.png or .svg)")
    o.add_argument("--table", choices=("auto", "full", "none"), default="auto",
                   help="per-op table: 'auto' shortens long models around the peak")
    o.add_argument("--emit", action="append", choices=driver.EMIT_KINDS, metavar="KIND",
                   help="with -o, what to write (repeatable): 'c' sources (default), "
                   "'blob' a model blob <name>.nnmb for nnrt's loader, 'tflite' "
                   "<name>_nnopt.tflite for stock TFLM (nnopt's order and offline memory "
                   "plan; docs/tflm.md)")
    add_plan_arguments(p)


#: Plan once more without the budget (to say what tiling would have given) only for
#: models of at most this many ops: planning again is quick there (vww_96_int8, 31 ops:
#: about a second), and the report stays the same under any load.
ALTERNATIVE_PLAN_OPS = 120


def tiled_alternative(compiled: driver.Compiled, request: driver.CompileRequest) -> int | None:
    """The arena a plan without the budget reaches when the budget made tiling
    unnecessary (``--tiling auto``, static allocator, fits untiled), or None: not
    applicable, the alternative does not tile, or planning is too slow to repeat."""
    plan = compiled.planned.plan
    if (plan.stages or plan.sram_budget_bytes is None or request.allocator != "static"
            or plan.options.get("tiling") != "auto" or plan.sram_bytes > plan.sram_budget_bytes
            or len(compiled.loaded.graph.ops) > ALTERNATIVE_PLAN_OPS):
        return None
    opts = replace(request.options, board=None, sram=None, progress=None)
    alt = plan_model(compiled.loaded.graph, opts, source_bytes=compiled.loaded.data).plan
    return alt.arena_bytes if alt.stages and alt.arena_bytes < plan.arena_bytes else None


def run(args: argparse.Namespace) -> int:
    request = compile_request(args, plan_options(args))  # a bad --swap-key-id fails here
    loaded = driver.load(request.model, progress=progress,
                         input_shapes=dict(request.input_shapes),
                         input_values=dict(request.input_values))
    popts, line = planning_progress(request.options, len(loaded.graph.ops))
    try:
        compiled = driver.plan(replace(request, options=popts), loaded, progress=progress)
    finally:
        line.close()
    plan = compiled.planned.plan
    graph = compiled.planned.graph
    out = sys.stdout
    print(headline(plan, arena_bytes=compiled.arena_bytes,
                   tflm_bytes=tflm_arena_bytes(loaded.graph, plan.alignment)), file=out)
    for why in why_lines(plan, tiled_alternative=tiled_alternative(compiled, request),
                         allocator=request.allocator):
        print(f"  {why}", file=out)
    print("", file=out)
    print("\n".join(summary(plan)), file=out)
    for note in expansion_lines(loaded.graph.expansions):
        print(note, file=out)
    layout = internal_layout(graph) if is_onnx(loaded.data) else None
    if layout:
        print(f"  layout: {layout}", file=out)
    if plan.swap is not None:
        print("\n".join(swap_summary(plan.swap)), file=out)
    dyn = compiled.dynamic
    if dyn is not None:
        print("\n".join(summary_lines(dyn, plan.arena_bytes)), file=out)
    if args.table != "none":
        print("", file=out)
        print("\n".join(op_table(plan, graph, None if args.table == "full" else 40)),
              file=out)
        if plan.swap is not None and plan.swap.enabled:
            print("\nstreamed ops (cost model):", file=out)
            print("\n".join(swap_table(plan.swap)), file=out)
    written = driver.write(compiled, progress=progress, warn=warn)
    gen = written.generated
    if gen is not None:
        print(f"\nwrote {gen.sources.c_file} and {gen.sources.h_file.name}", file=out)
        spec = list(gen.sources.specialized)
        mode = plan.options.get("specialize", "auto")
        print(f"kernels specialised to the model (--specialize {mode}): "
              + ("ops " + ", ".join(map(str, spec)) if spec else "none"), file=out)
        if gen.blob is not None:
            dev = plan.swap.device if plan.swap is not None else ""
            print(f"wrote {gen.blob} ({gen.blob.stat().st_size:,} bytes, for the "
                  + (f"board's storage device {dev})" if dev else "external flash)"),
                  file=out)
    mb = written.model_blob
    if mb is not None:
        print(f"wrote {mb.path} ({mb.bytes:,} bytes; the loader needs an arena of "
              f"{mb.arena_bytes:,} bytes)", file=out)
    if written.tflm is not None:
        print("\n".join(written.tflm.lines()), file=out)
        if written.tflm.path is not None:
            print(f"wrote {written.tflm.path}", file=out)
    for path in (*written.reports, *written.plots):
        print(f"wrote {path}", file=out)
    over = compiled.budget_error()
    if over is not None:
        raise over
    return 0
