"""``nnopt optimize``: plan a model, report memory, generate C sources."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import NnoptError
from ..ir import Graph
from ..passes.dynamic import dynamic_plan, summary_lines
from ..planner import PlannedModel, check_budget, plan_model
from ..report.text import op_table, summary, swap_summary, swap_table
from ..swap.pipeline import configured_key, generate_model, swap_of, write_new_key
from ..swap.provision import KeyStoreError
from .common import (
    add_plan_arguments,
    load_model_arg,
    plan_options,
    plan_swap,
    progress,
    swap_key_id,
    warn,
)

DESCRIPTION = """\
Plan a .tflite model for a microcontroller and report its memory:
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
    p.add_argument("model", type=Path, metavar="MODEL", help="the model to plan")
    p.add_argument("-o", "--out", type=Path, metavar="OUTDIR",
                   help="write generated C, <name>_plan.json, <name>_report.json and "
                   "<name>_memory.png here")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    p.add_argument("--plot", type=Path, metavar="PATH",
                   help="write the memory-over-time picture here (.png or .svg)")
    p.add_argument("--table", choices=("auto", "full", "none"), default="auto",
                   help="per-op table: 'auto' shortens long models around the peak")
    p.add_argument("--emit", action="append", choices=("c", "blob"), metavar="KIND",
                   help="with -o, what to write (repeatable): 'c' the generated sources "
                   "(default), 'blob' a model blob <name>.nnmb that nnrt's loader runs "
                   "without regenerated C (dynamic allocator; see nnrt/loader.h)")
    add_plan_arguments(p)


def report_json(pm: PlannedModel) -> dict[str, Any]:
    d = pm.plan.to_json()
    d["ops"] = {str(op.index): op.opcode for op in pm.source.ops}
    return d


def run(args: argparse.Namespace) -> int:
    opts = plan_options(args)
    swap_key_id(args)  # a bad --swap-key-id fails before planning
    progress(f"reading {args.model}")
    data = args.model.read_bytes() if args.model.is_file() else b""
    graph = load_model_arg(args)
    progress(f"planning {len(graph.ops)} ops")
    pm = plan_swap(args, plan_model(graph, opts, source_bytes=data), opts.board)
    plan = pm.plan
    if args.out and swap_key_id(args) is not None:
        _swap_key(args, pm, args.out)  # refuses a key id without a key before writing
    out = sys.stdout
    print("\n".join(summary(plan)), file=out)
    layout = _onnx_layout(data, graph)
    if layout:
        print(f"  layout: {layout}", file=out)
    if plan.swap is not None:
        print("\n".join(swap_summary(plan.swap)), file=out)
    dyn = (dynamic_plan(pm.graph, plan, lazy=args.allocator == "dynamic-lazy")
           if args.allocator != "static" else None)
    if dyn is not None:
        print("\n".join(summary_lines(dyn, plan.arena_bytes)), file=out)
    if args.table != "none":
        print("", file=out)
        print("\n".join(op_table(plan, pm.graph, None if args.table == "full" else 40)),
              file=out)
        if plan.swap is not None and plan.swap["enabled"]:
            print("\nstreamed ops (cost model):", file=out)
            print("\n".join(swap_table(plan.swap)), file=out)

    if args.emit and not args.out:
        raise NnoptError("--emit needs an output directory", hint="add -o OUTDIR")
    report = report_json(pm)
    report["allocator"] = args.allocator
    if layout:
        report["layout"] = layout
    if dyn is not None:
        report["dynamic"] = dyn.to_json()
    json_paths = [args.json] if args.json else []
    plot_paths = [args.plot] if args.plot else []
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        json_paths.append(args.out / f"{plan.model}_report.json")
        plot_paths.append(args.out / f"{plan.model}_memory.png")
        (args.out / f"{plan.model}_plan.json").write_text(json.dumps(plan.to_json(), indent=1))
        emit = args.emit or ["c"]
        if "c" in emit:
            progress("generating C sources")
            gen = generate_model(pm, args.out, allocator=args.allocator,
                                 key=_swap_key(args, pm, args.out), key_id=swap_key_id(args))
            print(f"\nwrote {gen.sources.c_file} and {gen.sources.h_file.name}", file=out)
            spec = list(gen.sources.specialized)
            report["specialized_ops"] = spec
            mode = plan.options.get("specialize", "auto")
            print(f"kernels specialised to the model (--specialize {mode}): "
                  + ("ops " + ", ".join(map(str, spec)) if spec else "none"), file=out)
            if gen.blob is not None:
                print(f"wrote {gen.blob} ({gen.blob.stat().st_size:,} bytes, for the "
                      "external flash)", file=out)
        if "blob" in emit:
            from ..blob.writer import write_blob

            progress("writing the model blob")
            bpm = pm
            if plan.overlaps or plan.inplace_ops or plan.stages:  # static-plan only
                bpm = plan_model(graph, replace(opts, inplace_ops="off", tiling="off"),
                                 source_bytes=data)
            blob = write_blob(bpm)
            path = args.out / f"{plan.model}.nnmb"
            path.write_bytes(blob)
            need = (dyn or dynamic_plan(bpm.graph, bpm.plan)).arena_bytes
            print(f"wrote {path} ({len(blob):,} bytes; the loader needs an arena of "
                  f"{need:,} bytes)", file=out)
    for path in json_paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1))
        print(f"wrote {path}", file=out)
    for path in plot_paths:
        from ..report.plot import render

        render(plan, pm.graph, path)
        print(f"wrote {path}", file=out)
    check_budget(plan if dyn is None else replace(plan, arena_bytes=dyn.arena_bytes),
                 opts.board)
    return 0


def _onnx_layout(data: bytes, graph: Graph) -> str | None:
    """For an ONNX model, which layout runs inside (the interface keeps ONNX's)."""
    from ..frontend.onnx import internal_layout, is_onnx

    return internal_layout(graph) if is_onnx(data) else None


def _swap_key(args: argparse.Namespace, pm: PlannedModel, out_dir: Path) -> bytes | None:
    """The configured key; without one, a new random key in <out>/<name>_swap.key."""
    swap = swap_of(pm.plan)
    if swap is None:
        return None
    cfg = configured_key(swap, key_hex=args.swap_key, key_file=args.swap_key_file)
    if cfg is not None:
        return cfg[0]
    if swap_key_id(args) is not None:
        raise KeyStoreError(
            "--swap-key-id: the blob must be sealed with the key the device holds under "
            "that id, and no key is configured",
            hint="pass it with --swap-key HEX, --swap-key-file PATH or $NNOPT_SWAP_KEY "
            "(the build machine's copy; the sources will not contain it)")
    path = out_dir / f"{pm.plan.model}_swap.key"
    key = write_new_key(swap, path)
    warn(f"no swap key configured: generated a random key in {path}; pass --swap-key or "
         "--swap-key-file (or set $NNOPT_SWAP_KEY) for reproducible builds")
    return key
