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
from ..passes.dynamic import summary_lines
from ..report.text import expansion_lines, op_table, summary, swap_summary, swap_table
from .common import (
    add_plan_arguments,
    compile_request,
    plan_options,
    planning_progress,
    progress,
    warn,
)

DESCRIPTION = """\
Plan a .tflite (or ONNX) model for a microcontroller and report its memory:
the peak SRAM as shipped (file order) and after optimisation (operator reordering,
max-pool fusion, in-place element-wise ops), the lower bound, the arena layout, and a
picture of the arena over time. With -o, also writes the generated C sources
(<name>_model.c/.h), the plan and the report there.

Weights that do not fit internal flash stream from the board's external flash
(--swap auto, the default): with -o the sealed weight blob <name>_swap.bin is written
next to the sources (and, when no key is configured, a new key <name>_swap.key). The
key is compiled into the sources, unless --swap-key-id names the PSA key the device
holds: then the sources contain no key byte (the blob is sealed with the configured
key, which the device must hold under that id; see `nnopt swap-provision`).

Exit status: 0 fits (or no budget given), 2 over budget, 1 any other error."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("optimize", help="plan a model, report memory, generate C",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, metavar="MODEL",
                   help="the model to plan: MODEL.tflite, or MODEL.onnx (torch.onnx.export; "
                   "recognised by content)")
    p.add_argument("-o", "--out", type=Path, metavar="OUTDIR",
                   help="write generated C, <name>_plan.json, <name>_report.json and "
                   "<name>_memory.png here")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    p.add_argument("--plot", type=Path, metavar="PATH",
                   help="write the memory-over-time picture here (.png or .svg)")
    p.add_argument("--table", choices=("auto", "full", "none"), default="auto",
                   help="per-op table: 'auto' shortens long models around the peak")
    p.add_argument("--emit", action="append", choices=driver.EMIT_KINDS, metavar="KIND",
                   help="with -o, what to write (repeatable): 'c' the generated sources "
                   "(default), 'blob' a model blob <name>.nnmb that nnrt's loader runs "
                   "without regenerated C (dynamic allocator; see nnrt/loader.h), 'tflite' "
                   "<name>_nnopt.tflite for stock TFLM: nnopt's operator order and TFLM's "
                   "offline memory plan, TFLM's arena before and after measured with the "
                   "tflite-micro interpreter (see docs/tflm.md)")
    add_plan_arguments(p)


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
            print(f"wrote {gen.blob} ({gen.blob.stat().st_size:,} bytes, for the "
                  "external flash)", file=out)
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
