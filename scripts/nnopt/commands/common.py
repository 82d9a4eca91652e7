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
from ..errors import NnoptError, UsageError
from ..frontend.onnx import parse_input_shapes, parse_input_values
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
    """The planning options of ``optimize`` and ``run``, in groups; one line of help each
    (what each does in full: docs/cli.md, generated from this parser, and
    docs/reading-the-report.md)."""
    m = p.add_argument_group("model input")
    m.add_argument("--input-shape", action="append", metavar="NAME=D1,D2,...",
                   help="fix input NAME's dynamic dimensions, e.g. input=1,3,32,32 "
                   "(repeatable)")
    add_input_value_argument(m)
    g = p.add_argument_group("budget and planning")
    g.add_argument("-b", "--board", metavar="NAME",
                   help="target board, its SRAM the budget: nnopt's (" + ", ".join(_safe_boards())
                   + ") or any Zephyr board target, from its devicetree (docs/boards.md)")
    add_edt_argument(g)
    g.add_argument("--sram", metavar="BYTES", type=_bytes_arg,
                   help="SRAM budget in bytes (k/M suffixes); overrides the board's")
    g.add_argument("--feature-maps", choices=("off", "auto"), default="off",
                   help="'auto' writes feature maps RAM cannot hold to the board's "
                   "feature_map_storage, sealed, and reads them back (docs/out-of-core.md); "
                   "'off' never (default)")
    g.add_argument("--order", choices=ORDERS, default="optimal",
                   help="operator order: 'optimal' minimises the live peak (default), "
                   "'file' keeps the model's")
    g.add_argument("--arena-strategy", action="append", choices=sorted(STRATEGIES),
                   metavar="NAME", help="arena layout strategy to try (repeatable; default "
                   "all, smallest wins): " + ", ".join(sorted(STRATEGIES)))
    g.add_argument("--no-fuse", action="store_true",
                   help="do not fold max-pools into the producing convolution")
    g.add_argument("--no-inplace", action="store_true",
                   help="do not run element-wise ops in place over a dying input")
    g.add_argument("--schedule-budget", type=float, default=10.0, metavar="SECONDS",
                   help="work budget of the exact order search (default 10)")
    g.add_argument("--plan-budget", type=float, default=DEFAULT_PLAN_BUDGET_S,
                   metavar="SECONDS",
                   help="work budget of all planning searches; the best plan so far is "
                   f"kept (default {DEFAULT_PLAN_BUDGET_S:g})")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress messages on stderr")
    g.add_argument("--allocator", choices=ALLOCATORS, default="static",
                   help="'static' planned offsets (default); 'dynamic' / 'dynamic-lazy' "
                   "nnrt's compacting allocator")
    b = p.add_argument_group("below the per-op bound (static allocator)")
    b.add_argument("--inplace-ops", choices=MODES, default="auto",
                   help="PAD folding, depthwise in place, concatenation slices, row "
                   "overlaps: where it pays (auto, default), off, or force")
    b.add_argument("--tiling", choices=MODES, default="auto",
                   help="run the first stage patch by patch (MCUNetV2): auto (default), "
                   "off, or force")
    b.add_argument("--max-extra-macs", type=float, default=15.0, metavar="PERCENT",
                   help="without a budget, tiling's limit of extra MACs (default 15)")
    b.add_argument("--max-extra-instructions", type=float,
                   default=DEFAULT_MAX_EXTRA_INSTRUCTIONS, metavar="PERCENT",
                   help="without a budget, tiling's limit of extra instructions, Cortex-M7 "
                   f"cost model (default {DEFAULT_MAX_EXTRA_INSTRUCTIONS:g})")
    k = p.add_argument_group("code generation")
    k.add_argument("--specialize", choices=SPECIALIZE_MODES, default="auto",
                   help="kernels specialised to the model's shapes (faster, more ROM): "
                   "auto (default), off, or force")
    s = p.add_argument_group("out-of-core: weights streamed from external flash")
    s.add_argument("--swap", choices=SWAP_MODES, default="auto",
                   help="auto: stream what does not fit internal flash (default); force; off")
    s.add_argument("--swap-key", metavar="HEX",
                   help="AEAD key of the weight blob, 32 or 64 hex digits (else "
                   "--swap-key-file, $NNOPT_SWAP_KEY, $NNOPT_SWAP_KEY_FILE)")
    s.add_argument("--swap-key-file", type=Path, metavar="PATH",
                   help="file holding the key as hex text or raw bytes")
    s.add_argument("--swap-key-id", metavar="ID",
                   help="production: open the blob with the device's PSA key ID; no key "
                   "byte in the generated code")
    s.add_argument("--swap-staging", type=_bytes_arg, metavar="BYTES",
                   help="bytes of each of the two staging buffers (default: cost model)")


def add_input_value_argument(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--input-value", action="append", metavar="NAME=V1,V2,...",
                   help="ONNX: pin input NAME to a constant at build time, e.g. sr=16000 "
                   "(repeatable)")


def input_values_arg(args: argparse.Namespace) -> dict[str, tuple[float, ...]]:
    """--input-value NAME=V1,V2,... (repeatable) as {name: values}."""
    return parse_input_values(getattr(args, "input_value", None) or [])


def input_shapes_arg(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """--input-shape NAME=D1,D2,... (repeatable) as {name: shape}."""
    return parse_input_shapes(getattr(args, "input_shape", None) or [])


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
            raise UsageError("--inplace-ops/--tiling force need the static allocator",
                             hint="drop --allocator or the force option")
        inplace_ops = tiling = "off"
    if getattr(args, "max_extra_macs", 15.0) < 0:
        raise UsageError("--max-extra-macs must not be negative",
                         hint="give a percentage >= 0 (0: tiling only if it adds no MACs)")
    max_instr = getattr(args, "max_extra_instructions", DEFAULT_MAX_EXTRA_INSTRUCTIONS)
    if max_instr < 0:
        raise UsageError("--max-extra-instructions must not be negative",
                         hint="give a percentage >= 0 (0: tiling only if it costs nothing)")
    plan_budget = getattr(args, "plan_budget", DEFAULT_PLAN_BUDGET_S)
    if plan_budget is not None and plan_budget < 0:
        raise UsageError("--plan-budget must not be negative",
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
        feature_maps=getattr(args, "feature_maps", "off"),
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
