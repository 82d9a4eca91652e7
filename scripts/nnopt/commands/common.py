"""Arguments shared by every command that plans a model (optimize, run), and the
compile driver's request they make (:func:`compile_request`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..boards import Board, known_boards
from ..driver import CompileRequest, SwapKey
from ..errors import NnoptError
from ..frontend.onnx import parse_input_shapes, parse_input_values
from ..frontend.tflite import load_model
from ..ir import Graph
from ..lowering.specialize import SPECIALIZE_MODES
from ..passes.arena import STRATEGIES
from ..passes.below_bound import DEFAULT_MAX_EXTRA_INSTRUCTIONS, MODES
from ..passes.plan_budget import DEFAULT_PLAN_BUDGET_S
from ..planfacts import ALLOCATORS
from ..planner import ORDERS, PlanOptions
from ..swap.placement import SWAP_MODES
from ..swap.provision import parse_key_id
from ..zephyr_tree import find_board
from .progress_line import Messages, ProgressLine


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("model input")
    m.add_argument("--input-shape", action="append", metavar="NAME=D1,D2,...",
                   help="fix the dynamic dimensions of input NAME (ONNX, and .tflite "
                   "models with a dynamic shape signature), e.g. "
                   "--input-shape input=1,3,32,32 (repeatable)")
    add_input_value_argument(m)
    g = p.add_argument_group("planning")
    g.add_argument("-b", "--board", metavar="NAME",
                   help="target board; its SRAM is the budget: one of nnopt's ("
                   + ", ".join(_safe_boards()) + "), or any Zephyr board target "
                   "(nrf52840dk/nrf52840) read from its devicetree when ZEPHYR_BASE or "
                   "NNOPT_ZEPHYR_WORKSPACE names a Zephyr tree")
    add_edt_argument(g)
    g.add_argument("--sram", metavar="BYTES", type=_bytes_arg,
                   help="SRAM budget for the arena in bytes (k/K and m/M suffixes allowed); "
                   "overrides the board's")
    g.add_argument("--order", choices=ORDERS, default="optimal",
                   help="operator order: 'file' keeps the model's, 'optimal' minimises the "
                   "peak of live memory (default)")
    g.add_argument("--arena-strategy", action="append", choices=sorted(STRATEGIES),
                   metavar="NAME", help="arena layout strategy to try (repeatable; default: "
                   "all, smallest wins): " + ", ".join(sorted(STRATEGIES)))
    g.add_argument("--no-fuse", action="store_true",
                   help="do not fold max-pools into the producing convolution")
    g.add_argument("--no-inplace", action="store_true",
                   help="do not run element-wise ops in place over a dying input")
    g.add_argument("--schedule-budget", type=float, default=10.0, metavar="SECONDS",
                   help="budget of the exact order search before falling back to the "
                   "heuristic, as a count of expanded states (25,000 per second: the same "
                   "plan under any load; the planner's CPU time stops it only past 3x this and the "
                   "--plan-budget guard) "
                   "(default 10)")
    g.add_argument("--plan-budget", type=float, default=DEFAULT_PLAN_BUDGET_S,
                   metavar="SECONDS",
                   help="budget of the planning searches (order search, tiling and "
                   "in-place candidates, concatenation views, arena strategies, hill "
                   "climbing), in seconds mapped onto a count of work per search (the same "
                   "plan under any load; the planner's CPU time stops them only at 3x this, at "
                   "least 60 s); past a count nnopt keeps the best plan found so far, never "
                   "worse than the classic plan, and the report says what was cut short "
                   f"(default {DEFAULT_PLAN_BUDGET_S:g}; --schedule-budget still caps the "
                   "order search alone)")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress messages on stderr (warnings and errors still)")
    g.add_argument("--allocator", choices=ALLOCATORS, default="static",
                   help="'static': buffers at planned offsets (default); 'dynamic': nnrt's "
                   "defragmenting allocator compacts live tensors after each op (arena = "
                   "aligned live-sum peak, at the cost of bytes moved); 'dynamic-lazy': "
                   "the same arena, compacting only when an allocation needs the room "
                   "(fewer bytes moved)")
    b = p.add_argument_group("below the per-op bound (static allocator)")
    b.add_argument("--inplace-ops", choices=MODES, default="auto",
                   help="PAD folded into the next window op, depthwise convolution in place "
                   "(a few rows of 4 channels of scratch), concatenation inputs written into "
                   "their slices, outputs overlapping the rows of a dying input: 'auto' where "
                   "it lowers the arena (default), 'off', or 'force' wherever valid")
    b.add_argument("--tiling", choices=MODES, default="auto",
                   help="run the memory-heavy first stage patch by patch (MCUNetV2): "
                   "'auto' chooses split point and patch grid (default; with a budget the "
                   "least extra compute that fits), 'off', or 'force'")
    b.add_argument("--max-extra-macs", type=float, default=15.0, metavar="PERCENT",
                   help="without a budget, tiling may add at most this share of the "
                   "model's multiply-accumulates (default 15)")
    b.add_argument("--max-extra-instructions", type=float,
                   default=DEFAULT_MAX_EXTRA_INSTRUCTIONS, metavar="PERCENT",
                   help="without a budget, tiling may add at most this share of the "
                   "model's instructions, as estimated by nnopt's Cortex-M7 cost model "
                   "(halo recompute at the first layers' instructions per MAC, kernel "
                   "calls per patch, tile copies; default "
                   f"{DEFAULT_MAX_EXTRA_INSTRUCTIONS:g}); with a budget, the tiling that "
                   "fits with the fewest estimated instructions is chosen")
    k = p.add_argument_group("code generation")
    k.add_argument("--specialize", choices=SPECIALIZE_MODES, default="auto",
                   help="kernels specialised to the model: the generated code calls the "
                   "runtime's kernel bodies with the op's shapes, strides, padding and "
                   "quantisation as constants (bit-exact, faster, more ROM; --stats reports "
                   "it as specialized_rom_bytes): 'auto' where it pays (default), 'off', or "
                   "'force' wherever a specialised form exists")
    s = p.add_argument_group("out-of-core execution (weights streamed from external flash)")
    s.add_argument("--swap", choices=SWAP_MODES, default="auto",
                   help="'auto' (default): on a board with external flash, stream the weights "
                   "that do not fit internal flash; 'force': stream every streamable weight "
                   "(also without a board); 'off': keep every weight internal")
    s.add_argument("--swap-key", metavar="HEX",
                   help="AEAD key the weight blob is sealed with: 32 hex digits "
                   "(aes-128-gcm) or 64 (chacha20-poly1305); else --swap-key-file, "
                   "$NNOPT_SWAP_KEY, $NNOPT_SWAP_KEY_FILE. Compiled into the generated code "
                   "(readable from the MCU's flash) unless --swap-key-id is given")
    s.add_argument("--swap-key-file", type=Path, metavar="PATH",
                   help="file holding the key as hex text or raw bytes")
    s.add_argument("--swap-key-id", metavar="ID",
                   help="production: the generated code opens the blob with the PSA key of "
                   "this id that the device holds (provisioned into its key store, e.g. "
                   "persistent in PSA ITS) and contains no key byte; decimal or 0x hex in "
                   "0x1..0x3fffffff. The blob is still sealed with the key above, which "
                   "must be the one provisioned")
    s.add_argument("--swap-staging", type=_bytes_arg, metavar="BYTES",
                   help="plaintext bytes of each of the two staging buffers (default: chosen "
                   "by the cost model)")


def add_input_value_argument(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--input-value", action="append", metavar="NAME=V1,V2,...",
                   help="ONNX models: pin input NAME to this value at build time (it is "
                   "no longer an input; If/Loop that depend on it are resolved), e.g. "
                   "--input-value sr=16000 (repeatable)")


def input_values_arg(args: argparse.Namespace) -> dict[str, tuple[float, ...]]:
    """--input-value NAME=V1,V2,... (repeatable) as {name: values}."""
    return parse_input_values(getattr(args, "input_value", None) or [])


def input_shapes_arg(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """--input-shape NAME=D1,D2,... (repeatable) as {name: shape}."""
    return parse_input_shapes(getattr(args, "input_shape", None) or [])


def load_model_arg(args: argparse.Namespace) -> Graph:
    """The model named on the command line (.tflite, or ONNX by content), with
    --input-shape and --input-value applied."""
    return load_model(args.model, input_shapes_arg(args) or None,
                      input_values=input_values_arg(args) or None)


def _safe_boards() -> list[str]:
    try:
        return known_boards()
    except NnoptError:
        return []


def _bytes_arg(text: str) -> int:
    t = text.strip().lower().replace("_", "").replace(",", "")
    mult = 1
    if t.endswith(("k", "kb", "kib")):
        mult, t = 1024, t.rstrip("kib")
    elif t.endswith(("m", "mb", "mib")):
        mult, t = 1024 * 1024, t.rstrip("mib")
    try:
        value = int(float(t) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def add_edt_argument(g: Any) -> None:
    g.add_argument("--edt", type=Path, metavar="EDT_PICKLE",
                   help="take the board from a Zephyr build's devicetree "
                   "(<build>/zephyr/edt.pickle; needs ZEPHYR_BASE), named by --board")


def board_arg(args: argparse.Namespace) -> Board | None:
    """The board of ``--board`` / ``--edt``: a build's devicetree when ``--edt`` is given,
    else nnopt's board file or the Zephyr board's devicetree (load_board), else None."""
    edt = getattr(args, "edt", None)
    if edt is not None:
        from ..devicetree import board_from_edt_pickle  # lazy: Zephyr is optional

        return board_from_edt_pickle(edt, args.board, getattr(args, "zephyr_base", None))
    return find_board(args.board) if args.board else None


def plan_options(args: argparse.Namespace) -> PlanOptions:
    board = board_arg(args)
    inplace_ops = getattr(args, "inplace_ops", "off")
    tiling = getattr(args, "tiling", "off")
    if getattr(args, "allocator", "static") != "static":
        # The dynamic allocator moves whole tensors: overlapping buffers and tiles are
        # static-plan techniques.
        if "force" in (inplace_ops, tiling):
            raise NnoptError("--inplace-ops/--tiling force need the static allocator",
                             hint="drop --allocator or the force option")
        inplace_ops = tiling = "off"
    if getattr(args, "max_extra_macs", 15.0) < 0:
        raise NnoptError("--max-extra-macs must not be negative",
                         hint="give a percentage >= 0 (0: tiling only if it adds no MACs)")
    max_instr = getattr(args, "max_extra_instructions", DEFAULT_MAX_EXTRA_INSTRUCTIONS)
    if max_instr < 0:
        raise NnoptError("--max-extra-instructions must not be negative",
                         hint="give a percentage >= 0 (0: tiling only if it costs nothing)")
    plan_budget = getattr(args, "plan_budget", DEFAULT_PLAN_BUDGET_S)
    if plan_budget is not None and plan_budget < 0:
        raise NnoptError("--plan-budget must not be negative",
                         hint="give seconds >= 0 (0: the first plan each search finds)")
    Messages.quiet = bool(getattr(args, "quiet", False))
    return PlanOptions(
        plan_budget_s=plan_budget,
        inplace_ops=inplace_ops,
        tiling=tiling,
        max_extra_macs=getattr(args, "max_extra_macs", 15.0),
        max_extra_instructions=max_instr,
        order=args.order,
        fuse=not args.no_fuse,
        inplace=not args.no_inplace,
        arena_strategies=tuple(args.arena_strategy) if args.arena_strategy else None,
        schedule_time_budget_s=args.schedule_budget,
        board=board,
        sram=args.sram,
        specialize=getattr(args, "specialize", "auto"),
    )


def compile_request(args: argparse.Namespace, options: PlanOptions, *,
                    model: Path | None = None) -> CompileRequest:
    """The compile driver's request of a command's arguments (planning, swap, key, and
    for ``nnopt optimize`` the outputs)."""
    emit = getattr(args, "emit", None)
    return CompileRequest(
        model=model or args.model, options=options, swap=args.swap,
        swap_staging=args.swap_staging, allocator=args.allocator,
        key=SwapKey(args.swap_key, args.swap_key_file, swap_key_id(args)),
        out_dir=getattr(args, "out", None), emit=tuple(emit or ()),
        report_path=getattr(args, "json", None), plot_path=getattr(args, "plot", None),
        input_shapes=tuple(input_shapes_arg(args).items()),
        input_values=tuple(input_values_arg(args).items()))


def swap_key_id(args: argparse.Namespace) -> int | None:
    """--swap-key-id as a PSA key id (KeyStoreError with a hint when out of range)."""
    text = getattr(args, "swap_key_id", None)
    if text is None:
        return None
    return parse_key_id(text)


def warn(msg: str) -> None:
    print(f"nnopt: warning: {msg}", file=sys.stderr, flush=True)


def progress(msg: str) -> None:
    """Progress on stderr, so stdout stays the report (silent with --quiet)."""
    Messages.say(msg)


def planning_progress(opts: PlanOptions, n_ops: int) -> tuple[PlanOptions, ProgressLine]:
    """``opts`` reporting the planning stages on a line redrawn on stderr (a terminal
    only; none with --quiet). Close the line when planning returns."""
    line = ProgressLine(f"planning {n_ops} ops")
    if Messages.quiet:
        return opts, line
    return replace(opts, progress=line), line
