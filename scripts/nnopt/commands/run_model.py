"""``nnopt run``: plan, generate, compile and run one inference; write the outputs."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..boards import load_board
from ..errors import NnoptError
from ..inputs import random_inputs
from ..ir import NUMPY_DTYPE
from ..passes.dynamic import dynamic_plan
from ..planner import PlannedModel, check_budget, plan_model
from ..run_stats import run_stats
from ..swap.blob import algorithm_id, generate_key
from ..swap.pipeline import configured_key, swap_of
from .common import (
    add_plan_arguments,
    load_model_arg,
    plan_options,
    plan_swap,
    progress,
    swap_key_id,
)

DESCRIPTION = """\
Run one inference of a model with nnopt's generated code and write the outputs.
Input and output files hold the raw bytes of the tensors (e.g. int8 NHWC). Accepts
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
    p.add_argument("model", type=Path, metavar="MODEL")
    p.add_argument("--target", choices=("host", "qemu-m7", "qemu-m3"), default="host",
                   help="where to run (default: host)")
    p.add_argument("-i", "--input", type=Path, action="append", metavar="IN.bin",
                   help="raw input tensor bytes (repeat for several inputs)")
    p.add_argument("-o", "--output", type=Path, action="append", metavar="OUT.bin",
                   help="where to write each output tensor (repeat for several outputs)")
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
        from ..swap.provision import check_key_store

        check_key_store(args.target, args.swap_key_store)  # before planning and building
    elif args.swap_key_store is not None:
        raise NnoptError("--swap-key-store needs --swap-key-id",
                         hint="name the key to use: --swap-key-id ID")
    graph = load_model_arg(args)
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
        default = "nucleo_f767zi" if args.target == "qemu-m7" else "mps2_an385"
        opts = replace(opts, board=load_board(default))
    progress(f"planning {len(graph.ops)} ops")
    pm = plan_swap(args, plan_model(graph, opts, source_bytes=args.model.read_bytes()),
                   opts.board)
    dyn = (dynamic_plan(pm.graph, pm.plan, lazy=args.allocator == "dynamic-lazy")
           if args.allocator != "static" else None)
    arena_bytes = dyn.arena_bytes if dyn is not None else pm.plan.arena_bytes
    check_budget(replace(pm.plan, arena_bytes=arena_bytes), opts.board)
    progress(f"building and running on {args.target}")
    from ..runner import run_planned  # the toolchain layer loads only when running

    res = run_planned(pm, inputs, target=args.target, board=opts.board,
                      allocator=args.allocator, swap_key=_swap_key(args, pm, key_id),
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
    if res.instructions is not None:
        print(f"instructions per inference: {res.instructions:,}")
    if args.stats:
        stats = run_stats(pm, res, target=args.target, board=opts.board,
                          allocator=args.allocator, arena_bytes=arena_bytes,
                          bytes_moved=dyn.bytes_moved if dyn is not None else None)
        args.stats.write_text(json.dumps(stats, indent=1))
    return 0


def _swap_key(args: argparse.Namespace, pm: PlannedModel,
              key_id: int | None) -> bytes | None:
    """The configured key; without one, a random key for this run's own blob (with a
    key id: only when --blob replaces that blob, the program holds no key)."""
    swap = swap_of(pm.plan)
    if swap is None:
        if args.blob is not None or key_id is not None:
            raise NnoptError(f"{'--blob' if args.blob is not None else '--swap-key-id'} "
                             "given but this plan streams no weights",
                             hint="add --swap force (or --swap auto on a board whose weights "
                             "exceed its internal flash)")
        return None
    cfg = configured_key(swap, key_hex=args.swap_key, key_file=args.swap_key_file)
    if cfg is not None:
        return cfg[0]
    if key_id is not None:
        if args.blob is None:
            raise NnoptError("--swap-key-id: this run's blob must be sealed with the key "
                             "the key store holds under that id, and no key is configured",
                             hint="pass it with --swap-key HEX / --swap-key-file PATH / "
                             "$NNOPT_SWAP_KEY, or run on an existing blob with --blob PATH")
        # the program opens --blob by key id; the generated blob is never read
        return generate_key(algorithm_id(swap.algorithm))
    if args.blob is not None:
        raise NnoptError(f"--blob {args.blob}: no swap key configured",
                         hint="pass the key the blob was sealed with: --swap-key HEX or "
                         "--swap-key-file PATH (e.g. the <name>_swap.key next to it)")
    progress("no swap key configured: sealing this run's blob with a random key")
    return generate_key(algorithm_id(swap.algorithm))
