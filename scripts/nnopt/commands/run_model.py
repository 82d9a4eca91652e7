"""``nnopt run``: plan, generate, compile and run one inference; write the outputs.

A thin command: the compile driver (:mod:`nnopt.driver`) plans (and chooses the run's
swap key), the runner (:mod:`nnopt.runner`) builds and runs; this prints."""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import driver
from ..boards import load_board
from ..errors import NnoptError, UsageError
from ..firmware.linker import check_firmware_budget, firmware_arena_budget
from ..firmware.toolchain import DEFAULT_BOARDS
from ..inputs import random_inputs
from ..report.outputs import output_lines
from ..run_stats import run_stats
from ..runner import TARGETS as RUN_TARGETS
from ..runner import run_planned
from ..swap.provision import check_key_store
from .common import (
    add_plan_arguments,
    compile_request,
    input_shapes_arg,
    input_values_arg,
    plan_options,
    planning_progress,
    progress,
    swap_key_id,
    warn,
)
from .progress_line import Stages

DESCRIPTION = """\
Compile the model with nnopt's generated code and run one inference: on this machine
(--target host) or as firmware under QEMU (qemu-m7, qemu-m3, qemu). Without --input
the input is random from --seed (default 0). Prints each output's name, shape and
values, dequantised for quantised outputs; -o DIR writes the raw output tensors there.
The firmware ELF is cached by content: its path is printed, --keep-elf PATH copies it
(for `nnopt check-elf`). Accepts every planning option of `nnopt optimize` and runs
exactly that plan. Input and output files hold raw tensor bytes (e.g. int8 NHWC); k
tensors back to back run k inferences in sequence, a stateful model's state carried
over. Streamed weights, key stores, QEMU details: docs/cli.md.

Targets: host (this machine's C compiler), qemu-m7 (Cortex-M7, QEMU mps2-an500),
qemu-m3 (Cortex-M3, mps2-an385), qemu (the --board's own core on the QEMU machine that
emulates it, linked within its budget: e.g. --board hifive1 runs RV32IMAC under
qemu-system-riscv32 -M sifive_e with the FE310's 16 KB)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="compile and run one inference (host or QEMU)",
                       description=DESCRIPTION, usage="%(prog)s MODEL [options]",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path, metavar="MODEL",
                   help="MODEL.tflite, or MODEL.onnx (inputs/outputs in ONNX layout and dtype)")
    r = p.add_argument_group("run")
    r.add_argument("--target", choices=RUN_TARGETS, default="host",
                   help="where to run (default: host); qemu: the --board's core and "
                   "QEMU machine")
    r.add_argument("-i", "--input", type=Path, action="append", metavar="IN.bin",
                   help="raw input tensor bytes, one file per input (repeatable); "
                   "default: random from --seed")
    r.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the random input when no --input is given (default 0)")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--out", "--output-dir", dest="out_dir", type=Path, action="append",
                   metavar="DIR",
                   help="write each output tensor's raw bytes into DIR as "
                   "<model>_output<i>.bin (as `optimize -o DIR`)")
    o.add_argument("--output", type=Path, action="append", metavar="OUT.bin",
                   help="write output i to this file instead (repeat, one per output)")
    o.add_argument("--keep-elf", type=Path, metavar="PATH",
                   help="copy the firmware ELF (or host executable) here, e.g. for "
                   "`nnopt check-elf PATH -b BOARD`")
    o.add_argument("--stats", type=Path, metavar="PATH",
                   help="write JSON stats: instructions (QEMU), arena, ROM/RAM of the ELF")
    w = p.add_argument_group("streamed weights")
    w.add_argument("--blob", type=Path, metavar="PATH",
                   help="run on this sealed weight blob (e.g. optimize's <name>_swap.bin) "
                   "with the key it was sealed with")
    w.add_argument("--swap-key-store", type=Path, metavar="DIR",
                   help="with --swap-key-id (host): the directory of PSA ITS key files")
    add_plan_arguments(p)
    p.set_defaults(func=run)


def output_files(args: argparse.Namespace, model: str, n_outputs: int) -> list[Path]:
    """Where the outputs go: --output files, or <model>_output<i>.bin in the -o DIR.
    ``-o OUT.bin`` (a file, the old meaning of -o here) still works, with a warning."""
    files: list[Path] = list(args.output or [])
    dirs: list[Path] = []
    for path in args.out_dir or []:
        if path.suffix and not path.is_dir():
            warn(f"-o {path}: -o names a directory now (as in `nnopt optimize`); "
                 f"use --output {path} for a file (-o FILE is deprecated)")
            files.append(path)
        else:
            dirs.append(path)
    if len(dirs) > 1 or (dirs and files):
        raise UsageError("give one -o DIR, or --output files, not both",
                         hint="-o DIR writes <model>_output<i>.bin for every output")
    if dirs:
        try:
            dirs[0].mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise NnoptError(f"cannot create {dirs[0]}: {err.strerror}") from err
        return [dirs[0] / f"{model}_output{i}.bin" for i in range(n_outputs)]
    if files and len(files) != n_outputs:
        raise UsageError(f"the model has {n_outputs} output(s), {len(files)} --output "
                         "given", hint="give one --output per output, or -o DIR")
    return files


def run(args: argparse.Namespace) -> int:
    opts = plan_options(args)
    key_id = swap_key_id(args)
    if key_id is not None:
        check_key_store(args.target, args.swap_key_store)  # before planning and building
    elif args.swap_key_store is not None:
        raise UsageError("--swap-key-store needs --swap-key-id",
                         hint="name the key to use: --swap-key-id ID")
    loaded = driver.load(args.model, input_shapes=input_shapes_arg(args),
                         input_values=input_values_arg(args))
    graph = loaded.graph
    inputs: list[bytes] = []
    if args.input:
        for path in args.input:
            try:
                inputs.append(path.read_bytes())
            except OSError as err:
                raise NnoptError(f"cannot read input file {path}: {err.strerror}") from err
    else:
        inputs = [x.tobytes() for x in random_inputs(graph, args.seed)]
        progress(f"input: random from seed {args.seed} (--input IN.bin for your own)")
    if args.board is None and args.target == "qemu":
        raise UsageError("--target qemu needs --board: the board's core picks the QEMU "
                         "machine", hint="e.g. --board qemu_riscv32, --board hifive1, "
                         "--board mps2_an385")
    if args.board is None and args.target in DEFAULT_BOARDS:
        opts = replace(opts, board=load_board(DEFAULT_BOARDS[args.target]))
    if args.target != "host" and opts.board is not None and opts.sram is None:
        # firmware: the stack shares the arena's region; plan (tile) for what is left
        opts = replace(opts, sram=firmware_arena_budget(opts.board))
    popts, line = planning_progress(opts, len(loaded.graph.ops))
    try:
        compiled = driver.plan(compile_request(args, popts), loaded, progress=progress)
    finally:
        line.close()
    pm = compiled.planned
    over = compiled.budget_error()
    if over is not None:
        raise over
    if args.target != "host" and opts.board is not None:
        check_firmware_budget(pm.plan, opts.board)  # the stack shares the arena's SRAM
    outs = output_files(args, pm.plan.model, len(pm.graph.outputs))
    with Stages() as stages:
        res = run_planned(pm, inputs, target=args.target, board=opts.board,
                          allocator=args.allocator,
                          swap_key=driver.run_key(compiled, blob=args.blob, progress=progress),
                          blob=args.blob, swap_key_id=key_id, key_store=args.swap_key_store,
                          progress=stages)
    print("\n".join(output_lines(pm.graph, res.outputs, res.invocations)))
    for path, data in zip(outs, res.outputs, strict=False):  # outs: none or all
        try:
            path.write_bytes(data)
        except OSError as err:
            raise NnoptError(f"cannot write {path}: {err.strerror}") from err
        print(f"wrote {path} ({len(data)} bytes)")
    if res.invocations > 1:
        print(f"ran {res.invocations} invocations in sequence (state carried over)")
    if res.instructions is not None:
        print(f"instructions per inference: {res.instructions:,}"
              + (" (the first)" if res.invocations > 1 else ""))
    if res.stack_bytes is not None:
        print(f"stack used: {res.stack_bytes:,} B")
    if res.executable is not None:
        print(f"{'executable' if args.target == 'host' else 'firmware'}: "
              f"{keep_elf(res.executable, args.keep_elf)}")
    if args.stats:
        dyn = compiled.dynamic
        stats = run_stats(pm, res, target=args.target, board=opts.board,
                          allocator=args.allocator, arena_bytes=compiled.arena_bytes,
                          bytes_moved=dyn.bytes_moved if dyn is not None else None)
        args.stats.write_text(json.dumps(stats, indent=1))
    return 0


def keep_elf(executable: Path, keep: Path | None) -> Path:
    """The executable, copied to ``keep`` when given (the build cache's copy may be
    evicted); the path to show."""
    if keep is None:
        return executable
    try:
        keep.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(executable, keep)
    except OSError as err:
        raise NnoptError(f"cannot copy the firmware to {keep}: {err.strerror}",
                         hint="check that the directory is writable") from err
    return keep
