"""``nnopt run``: plan, generate, compile and run one inference; write the outputs.

A thin command: the compile driver (:mod:`nnopt.driver`) plans (and chooses the run's
swap key), the runner (:mod:`nnopt.runner`) builds and runs; this prints."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import driver
from ..boards import load_board
from ..errors import NnoptError
from ..firmware.linker import check_firmware_budget, firmware_arena_budget
from ..firmware.toolchain import DEFAULT_BOARDS, TARGETS
from ..inputs import random_inputs
from ..ir import NUMPY_DTYPE
from ..run_stats import run_stats
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
)

DESCRIPTION = """\
Run one inference of a model with nnopt's generated code and write the outputs.
Input and output files hold the raw bytes of the tensors (e.g. int8 NHWC). An input
file holding k whole tensors back to back (every input the same k) runs k inferences
in sequence in one program, a stateful model's state (variable tensors: SVDF) carried
from one to the next; each output file then receives the k outputs back to back. Accepts
every planning option of `nnopt optimize` and executes exactly that plan. The build is
cached by content, so a second run with the same model and options does not compile.

Targets: host (this machine's C compiler), qemu-m7 (Cortex-M7 firmware under
qemu-system-arm -M mps2-an500, linked within the board's budget), qemu-m3 (Cortex-M3,
mps2-an385).

Streamed weights (--swap): the executable reads them from a sealed blob, by default
the one generated for this run; --blob runs on a given blob file instead (with the
key it was sealed with). A blob that fails authentication or is malformed stops the
run with an error and no output is written. --swap-key-id ID builds the code without
key bytes, opening the blob by PSA key id; on the host the key store is a directory of
PSA ITS files (--swap-key-store DIR, written by `nnopt swap-provision`); a missing key
or one whose type, algorithm or usage does not fit stops the run the same way. QEMU
targets have no persistent key store: they take key bytes only."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="compile and run one inference (host or QEMU)",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path, metavar="MODEL",
                   help="MODEL.tflite, or MODEL.onnx (inputs/outputs in ONNX layout and dtype)")
    p.add_argument("--target", choices=TARGETS, default="host",
                   help="where to run (default: host). qemu: the QEMU machine that emulates "
                   "--board (default nucleo_f767zi), any core of docs/cores.md; qemu-m7 / "
                   "qemu-m3: the same for a Cortex-M7 / M3 board (default nucleo_f767zi / "
                   "mps2_an385)")
    p.add_argument("-i", "--input", type=Path, action="append", metavar="IN.bin",
                   help="raw input tensor bytes (repeat for several inputs); k tensors "
                   "back to back run k invocations in sequence, state carried over")
    p.add_argument("-o", "--output", type=Path, action="append", metavar="OUT.bin",
                   help="where to write each output tensor (repeat for several outputs); "
                   "k invocations write k tensors back to back")
    p.add_argument("--seed", type=int, metavar="N",
                   help="without --input: run on a random input from this seed")
    p.add_argument("--stats", type=Path, metavar="PATH",
                   help="write JSON stats (instructions per inference on QEMU, arena bytes; "
                        "QEMU targets: rom_bytes/ram_bytes of the firmware ELF from the ELF "
                        "check, stack reservation included; specialized_rom_bytes: code of "
                        "the kernels specialised to the model, from the ELF's symbols)")
    p.add_argument("--blob", type=Path, metavar="PATH",
                   help="streamed weights: run on this blob (e.g. the <name>_swap.bin "
                   "`nnopt optimize` wrote) instead of one generated for this run; needs "
                   "the key it was sealed with (--swap-key / --swap-key-file)")
    p.add_argument("--swap-key-store", type=Path, metavar="DIR",
                   help="with --swap-key-id (host): the key store holding that key, a "
                   "directory of PSA ITS files (see `nnopt swap-provision`)")
    add_plan_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    opts = plan_options(args)
    key_id = swap_key_id(args)
    if key_id is not None:
        check_key_store(args.target, args.swap_key_store)  # before planning and building
    elif args.swap_key_store is not None:
        raise NnoptError("--swap-key-store needs --swap-key-id",
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
    elif args.seed is not None:
        inputs = [x.tobytes() for x in random_inputs(graph, args.seed)]
    else:
        raise NnoptError("no input given", hint="pass --input IN.bin or --seed N")
    if args.board is None and args.target.startswith("qemu"):
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
    progress(f"building and running on {args.target}")
    res = run_planned(pm, inputs, target=args.target, board=opts.board,
                      allocator=args.allocator,
                      swap_key=driver.run_key(compiled, blob=args.blob, progress=progress),
                      blob=args.blob, swap_key_id=key_id, key_store=args.swap_key_store)
    outs = args.output or []
    if outs and len(outs) != len(res.outputs):
        raise NnoptError(f"model has {len(res.outputs)} outputs, {len(outs)} --output given")
    for path, data in zip(outs, res.outputs, strict=False):
        path.write_bytes(data)
        print(f"wrote {path} ({len(data)} bytes)")
    if not outs:
        for i, (t, data) in enumerate(zip(pm.graph.outputs, res.outputs, strict=True)):
            arr = np.frombuffer(data, dtype=NUMPY_DTYPE[pm.graph.tensors[t].dtype])
            print(f"output {i}: {np.array2string(arr[:32], max_line_width=100)}"
                  + (" ..." if arr.size > 32 else ""))
    if res.invocations > 1:
        print(f"ran {res.invocations} invocations in sequence (state carried over)")
    if res.instructions is not None:
        print(f"instructions per inference: {res.instructions:,}"
              + (" (the first)" if res.invocations > 1 else ""))
    if args.stats:
        dyn = compiled.dynamic
        stats = run_stats(pm, res, target=args.target, board=opts.board,
                          allocator=args.allocator, arena_bytes=compiled.arena_bytes,
                          bytes_moved=dyn.bytes_moved if dyn is not None else None)
        args.stats.write_text(json.dumps(stats, indent=1))
    return 0
