#!/usr/bin/env python3
"""nnopt firmware against TensorFlow Lite Micro firmware: speed, ROM and RAM per model.

For every model it lists (default: the groups ``anchors`` = the five models of
ANCHORS.md's TFLM firmware table, ``families`` = MODELS_DIR/families/, ``keras``,
``realworld`` = the shared real-world models (.tflite and .onnx), ``stateful`` = the SVDF
and LSTM models of ``models/``, ``onnx`` = the ONNX models users bring through the
PyTorch path, MODELS_DIR/onnx/ (float and QDQ int8), ``tflm`` = TFLM's own example
models, MODELS_DIR/tflm/ but the anchor among them (hello_world, micro_speech,
MobileNet v2 224); ``--groups`` picks and orders
them, ``--no-families`` is the anchors alone, ``--stateful`` the stateful ones alone,
``--all`` every ``*.tflite`` and ``*.onnx`` under MODELS_DIR), in one run, from the
same random inputs (seed 1):

- **ONNX models** (:mod:`converted_models`): TFLM reads no ONNX, so each is converted
  once, as a user comparing the two would: ``nnopt convert MODEL.onnx -o MODEL.tflite``
  with the input shapes and values of ``converted_models.CONVERT_INPUTS`` (deterministic
  bytes). TFLM, nnopt and the interpreter all run that .tflite; the row says so, with
  the command, and whether nnopt's generated C from the .onnx itself is the same
  (``onnx_same_code``: then nnopt's figures are the ONNX model's too).

- **nnopt**: instructions per inference of its generated firmware under QEMU with
  ``-icount shift=0`` (SysTick, 40-instruction resolution, deterministic): Cortex-M7
  (``qemu-m7``, board nucleo_f767zi, DSP/SIMD kernels) and Cortex-M3 (``qemu-m3``,
  board mps2_an385, the portable C kernels; ``--no-m3`` skips it).
- **nnopt on more cores** (``--cores m7,m3,m4,m33,m55,m0,rv32``, default ``m7,m3``;
  ``BENCH_CORES``, docs/cores.md): the same model planned for each core's board as
  the bench plans the M7's (the board's SRAM less the firmware's stack), run on its
  QEMU machine:
  instructions, ROM / RAM, bit-exact with the interpreter, or the budget error of a
  board it does not fit; their own table.
- **TFLM on every core** (:mod:`tflm_targets`: ``<kernels>_<core>``, e.g.
  ``cmsis_nn_m4``, ``ref_rv32``): TFLM built for each core of ``--cores`` as for the M7
  (``cortex_m_generic`` with the core's ``TARGET_ARCH``, reference and CMSIS-NN kernels;
  ``riscv32_generic`` with ``RISCV_ARCH=rv32imac`` on RISC-V, reference kernels), linked
  and run like nnopt's firmware for that core's board, checked against the interpreter:
  a table per core, the geometric means of ours / TFLM per core, and ``core_rows`` /
  ``core_geomeans`` in the JSON (:mod:`fw_cores`: one row per core and model with
  ``core``, ``model``, ``instructions``, ``tflm_cmsis_nn_instructions``,
  ``tflm_ref_instructions``, ``bit_exact``). A model TFLM cannot fit on a board (the
  M0's 256 KB flash / 16 KB SRAM) gets "does not fit" and the reason, before any build.
- **TFLM** as the same kind of Cortex-M7 firmware, reference kernels and CMSIS-NN
  kernels (:mod:`tflm_firmware`): TFLM's library built by its own Makefile
  (``cortex_m_generic``, ``cortex-m7+fp``, ``BUILD_TYPE=release``) once per variant
  from the local tflite-micro / CMSIS-NN / CMSIS_6 source (``--tflm-dir``,
  ``--cmsis-nn-dir``, ``--cmsis-dir``; default the Zephyr workspace of
  ``NNOPT_ZEPHYR_WORKSPACE`` or ``ZEPHYR_BASE``); per model a C++ harness with the model
  as a const array, a ``MicroMutableOpResolver`` of its operators and a static arena of
  exactly what ``arena_used_bytes()`` reports on the 32-bit target (a probe build reads
  it), linked with the same startup, port and linker script as nnopt's firmware and
  counted the same way (around ``Invoke()``). Without the source, the TFLM columns are
  empty and say what is missing; nnopt's are measured all the same.
- **TFLM on the Cortex-M3** (``ref_m3``, ``cmsis_nn_m3``; not with ``--no-m3``): the same
  two builds for ``cortex-m3`` (soft float; CMSIS-NN's portable C path), linked like
  nnopt's M3 firmware (mps2_an385) and run beside it: its own table, ratios and
  geometric means.
- **bit-exact**: the outputs of both, every invocation, against the ``tflite-micro``
  Python interpreter's. On the M3, nnopt's outputs are also compared with TFLM's M3
  firmware's (``m3_same_as_tflm_m3``): the M3's newlib has soft-float ``expf``/``logf``
  that differ from the host's glibc in the last bit for some inputs, so a float model
  that uses them differs from the host interpreter on the M3 in TFLM too; nnopt's row
  is bit-exact when its M3 outputs are byte-identical with TFLM's there.
- **ROM / RAM** from :func:`nnopt.elfcheck.check_elf` on each ELF (the real board's
  regions): ROM = text + rodata (weights or the whole .tflite included) + data load
  image, RAM = data + bss (arena included), without the stack reservation.
- **runtime code**: bytes of code and read-only data the linker took from the nnrt
  runtime library (``libnnrt.a``: kernels and core), from the link map; "code" = ROM
  minus the model's constant data (weights and per-op parameters) = everything TFLM's
  "code" column (ROM minus the .tflite) also holds (harness, port, libc included).
- **TFLM min arena**: the smallest ``arena_size`` with which the ``tflite-micro`` Python
  interpreter loads the model and runs one inference, found by bisection (a 64-bit host
  figure: its persistent part is larger than on a 32-bit MCU).

The ratios are nnopt / TFLM instructions, with a geometric mean per model group; a
model one side cannot run (an operator it lacks, a board it does not fit, output that
differs) keeps its row with the reason. ``--json PATH`` writes the rows (rewritten after
every model), ``--plot PATH`` a PNG of the ratios per model.

Stateful models (variable tensors: SVDF, LSTM; resource variables) run
``STATEFUL_INVOCATIONS`` inferences in sequence in one firmware run, the state carried
over (instructions: the first); their table adds the persistent state beside the arena.

``--profile MODEL`` prints instructions per operator instead (QEMU, one inference;
the generated code is built with NNRT_TRACE and a harness that reads the instruction
counter after every operator), with MACs and instructions per MAC; of an ONNX model,
those of the .tflite its row measures. On the M7 (``--target qemu-m7``, default) or
the M3 (``--target qemu-m3``), or on any core with ``--cores CORE`` (one).

The parts: :mod:`fw_models` (which models), :mod:`converted_models` (ONNX to .tflite),
:mod:`fw_nnopt` (nnopt's firmware), :mod:`fw_tflm` with :mod:`tflm_firmware`,
:mod:`tflm_targets` and :mod:`tflm_cache` (TFLM's), :mod:`fw_rows` (the rows),
:mod:`fw_render` and :mod:`fw_cores` (tables, JSON), :mod:`fw_plot`, :mod:`fw_profile`.

    python benchmarks/bench_firmware.py [MODEL ...] [--groups G,...] [--all | --stateful]
                                        [--no-families] [--models-dir DIR] [--json PATH]
                                        [--plot PATH] [--no-tflm] [--no-tflm-firmware]
                                        [--tflm-dir DIR] [--cmsis-nn-dir DIR]
                                        [--cmsis-dir DIR] [--tflm-variants V,...]
                                        [--jobs N] [--no-m3] [--cores C,...]
                                        [--profile MODEL]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import converted_models
import tflm_cache
import tflm_firmware
from common import geomean, ratio  # noqa: F401  (names tests and callers import from here)
from converted_models import Converted, convert_onnx, rel_path
from fw_models import ANCHOR_FILES, ANCHORS, GROUPS, STATEFUL_FILES, model_groups  # noqa: F401
from fw_nnopt import (  # noqa: F401
    _first_line,
    _measure_nnopt,
    _options,
    _plan,
    count_macs,
    library_rom,
    measure_core,
    model_const_bytes,
)
from fw_plot import plot
from fw_profile import PROFILE_MAIN_C, profile  # noqa: F401
from fw_render import (  # noqa: F401
    cores_markdown,
    group_geomeans,
    m3_markdown,
    markdown,
    notes,
    write_doc,
)
from fw_rows import (  # noqa: F401
    BENCH_CORES,
    DEFAULT_CORES,
    M3_BOARD,
    M7_BOARD,
    BenchCore,
    CoreFigures,
    Row,
)
from fw_tflm import (  # noqa: F401
    PROBE_ARENA,
    TflmContext,
    destination,
    measure_tflm,
    measure_tflm_firmware,
    smallest_arena,
    tflm_context,
)
from oracle import (
    STATEFUL_INVOCATIONS,
    Oracle,
    compare_outputs,
    input_blobs,
    model_steps,
    oracle_outputs,
    stateful_tflite,
    tflm_min_arena,
)

from nnopt.boards import load_board
from nnopt.errors import BudgetError, NnoptError
from nnopt.frontend.tflite import load_model_bytes, model_name
from nnopt.lowering.specialize import SPECIALIZE_MODES
from nnopt.paths import shared_models_dir
from nnopt.planner import PlannedModel, PlanOptions


def measure(path: Path, root: Path, *, m3: bool, tflm: bool, timeout_s: float,
            specialize: str = "auto", group: str = "",
            fw: TflmContext | None = None, converted: Converted | None = None,
            cores: tuple[str, ...] = ()) -> Row:
    """nnopt's firmware figures for one model and, with ``fw``, TFLM's (both kernel
    variants) from the same inputs, all checked against the tflite-micro interpreter.
    What cannot be measured is recorded in the row (``error``, ``tflm_*_error``).
    ``converted``: ``path`` is the .tflite nnopt convert wrote from that ONNX model."""
    data = path.read_bytes()
    name = model_name(path)  # a C identifier (oww_hey_rhasspy_v0.1 has a dot)
    m7 = load_board(M7_BOARD)
    row = Row(model=path.stem, path=rel_path(path, root), ops=0, macs=0, group=group,
              specialize=specialize)
    _converted_fields(row, converted)
    pm: PlannedModel | None = None
    try:
        pm = _plan(data, name, m7, specialize=specialize)
    except BudgetError as err:
        row.error = f"does not fit {M7_BOARD}: {_first_line(err)}"
    except NnoptError as err:
        row.error = _first_line(err)
    if converted is not None and pm is not None:
        try:
            row.onnx_same_code = converted_models.same_code(
                converted, pm, _options(m7, None, specialize))
        except NnoptError as err:  # the row keeps the converted model's figures
            print(f"bench_firmware: {converted.rel}: not planned from the .onnx: "
                  f"{_first_line(err)}", file=sys.stderr)
    try:
        source = pm.source if pm is not None else load_model_bytes(data, name=name,
                                                                    unsupported="plan")
    except NnoptError as err:
        source = None
        row.error = row.error or _first_line(err)
    stateful = bool(pm.plan.state) if pm is not None else stateful_tflite(data)
    k = STATEFUL_INVOCATIONS if stateful else 1
    row.invocations = k
    steps = model_steps(data, source, k)
    inputs = input_blobs(steps)
    if pm is not None:
        row.ops, row.macs = len(pm.graph.ops), count_macs(pm.graph)
        row.arena_bytes = pm.plan.arena_bytes
        row.scratch_bytes = sum(s.size for s in pm.plan.scratch)
        row.state_bytes = pm.plan.state_bytes
    elif source is not None:
        row.ops = len(source.ops)
    if tflm:
        row.tflm_min_arena, row.tflm_error = tflm_min_arena(path, timeout_s)
    expected: Oracle | None = None
    oracle_error: str | None = None
    if steps:
        expected, oracle_error = oracle_outputs(data, steps, row.tflm_min_arena)
    outs3: list[bytes] | None = None
    m7_exact: bool | None = None
    m3_diff: str | None = None
    with tempfile.TemporaryDirectory(prefix="bench-fw-") as tmp:
        if pm is not None:
            try:
                outs, outs3 = _measure_nnopt(row, pm, inputs, data, Path(tmp), m3=m3,
                                             specialize=specialize)
                if expected is not None:
                    m7_exact = compare_outputs(outs, expected) is None
                    if outs3 is not None:
                        m3_diff = compare_outputs(outs3, expected)
                        row.m3_bit_exact = m3_diff is None
            except NnoptError as err:
                row.error = _first_line(err)
        if source is not None and steps:
            for core in cores:
                row.cores[core] = measure_core(core, data, name, inputs, expected,
                                               Path(tmp) / core, specialize)
        if fw is not None:
            for variant in fw.variants:
                why = fw.reason or oracle_error
                if why is None and not steps:
                    why = "no inputs: the model's graph cannot be read"
                if why is not None:
                    dest, prefix = destination(row, variant)
                    setattr(dest, prefix + "error", why)
                    continue
                assert expected is not None
                measure_tflm(row, fw, variant, path, inputs, expected, k,
                             Path(tmp) / f"tflm-{variant}")
    if outs3 is not None and expected is not None:
        judge_m3(row, outs3)
    if m7_exact is not None:
        settle_bit_exact(row, m7_exact, m3_diff)
    row.ratio_cmsis_nn = ratio(row.instructions, row.tflm_cmsis_nn_instructions)
    row.ratio_ref = ratio(row.instructions, row.tflm_ref_instructions)
    row.ratio_m3_cmsis_nn = ratio(row.m3_instructions, row.tflm_cmsis_nn_m3_instructions)
    row.ratio_m3_ref = ratio(row.m3_instructions, row.tflm_ref_m3_instructions)
    for figs in row.cores.values():
        figs.ratio_cmsis_nn = ratio(figs.instructions, figs.tflm_cmsis_nn_instructions)
        figs.ratio_ref = ratio(figs.instructions, figs.tflm_ref_instructions)
    return row


def judge_m3(row: Row, outs3: list[bytes]) -> None:
    """Compare nnopt's M3 outputs with TFLM's M3 firmwares' (by digest): where the M3
    differs from the host interpreter only through the core's libm, TFLM's own kernels
    on the same core and libc are the reference of 'bit-exact with TFLM'."""
    digests = [tflm_cache.sha256_hex(b) for b in outs3]
    theirs = [d for v in tflm_firmware.M3_VARIANTS
              if (d := getattr(row, f"tflm_{v}_outputs_sha256")) is not None]
    if not theirs:
        return
    row.m3_same_as_tflm_m3 = all(d == digests for d in theirs)


def settle_bit_exact(row: Row, m7_exact: bool, m3_diff: str | None) -> None:
    """``row.bit_exact`` from the M7 verdict and the M3 one (``m3_diff``: how the M3
    outputs differ from the interpreter's, None if they do not or there was no M3 run):
    an M3 that differs from the interpreter but is byte-identical with TFLM's own M3
    firmware (:func:`judge_m3`) counts as bit-exact with TFLM; one that differs from
    both is the row's error."""
    m3_ok = m3_diff is None or row.m3_same_as_tflm_m3 is True
    row.bit_exact = m7_exact and m3_ok
    if not m3_ok:
        row.error = row.error or f"Cortex-M3 output differs from the interpreter's: {m3_diff}"


def _converted_fields(row: Row, conv: Converted | None) -> None:
    """An ONNX model's row: its own path, how it was converted, into what."""
    if conv is None:
        return
    row.path = conv.rel
    row.convert_command = conv.command()
    row.converted_path = os.fspath(conv.tflite) if conv.tflite else None
    row.converted_sha256 = conv.sha256


def unconverted_row(group: str, conv: Converted, fw: TflmContext | None) -> Row:
    """The row of an ONNX model nnopt convert could not write: neither side runs."""
    assert conv.error is not None
    row = Row(model=conv.source.stem, path=conv.rel, ops=0, macs=0, group=group,
              error=conv.error)
    _converted_fields(row, conv)
    for variant in fw.variants if fw is not None else ():
        dest, prefix = destination(row, variant)
        setattr(dest, prefix + "error", "no .tflite to run: the conversion failed")
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", type=Path,
                   help="model files (default: every model of --groups)")
    p.add_argument("--models-dir", type=Path, default=shared_models_dir())
    p.add_argument("--groups", default=",".join(GROUPS),
                   help="model groups, in order (default: %(default)s)")
    p.add_argument("--all", action="store_true",
                   help="every *.tflite and *.onnx under --models-dir (group: its folder)")
    p.add_argument("--stateful", action="store_true",
                   help="the stateful models alone (TFLM's SVDF keyword benchmark and MNIST "
                   "LSTM, models/)")
    p.add_argument("--no-families", action="store_true",
                   help="the anchor models only")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.add_argument("--plot", metavar="PATH", type=Path,
                   help="also draw ours / TFLM instructions per model (PNG)")
    p.add_argument("--no-tflm", action="store_true",
                   help="nnopt alone: no TFLM firmware, no TFLM min-arena bisection")
    p.add_argument("--no-tflm-firmware", action="store_true",
                   help="no TFLM firmware (the min-arena bisection still runs)")
    p.add_argument("--no-tflm-min-arena", action="store_true",
                   help="no min-arena bisection with the Python interpreter (the TFLM "
                   "firmware still runs, with its own 32-bit arena)")
    p.add_argument("--tflm-dir", type=Path,
                   help="tflite-micro source (default: the Zephyr workspace's module, "
                   "$NNOPT_ZEPHYR_WORKSPACE or the parent of $ZEPHYR_BASE)")
    p.add_argument("--cmsis-nn-dir", type=Path, help="CMSIS-NN source (default: as --tflm-dir)")
    p.add_argument("--cmsis-dir", type=Path, help="CMSIS_6 source (default: as --tflm-dir)")
    p.add_argument("--tflm-variants", default=",".join(tflm_firmware.ALL_VARIANTS),
                   help="TFLM builds to measure, those of the cores measured (--cores): "
                   "ref / cmsis_nn (reference / CMSIS-NN kernels) on the Cortex-M7, "
                   "<kernels>_<core> on the others (ref_m3 ... ref_rv32; *_m3 not with "
                   "--no-m3) (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="make -j of TFLM's library builds")
    p.add_argument("--tflm-cache", choices=tflm_cache.MODES, default="use",
                   help="TFLM's measurements kept across runs (tflm_cache.py, keyed by the "
                   "model, inputs, TFLM/CMSIS-NN source, harness, compiler and flags): "
                   "'use' them (default), 'refresh' (measure again, store), 'off'")
    p.add_argument("--no-m3", action="store_true", help="skip the Cortex-M3 runs")
    p.add_argument("--cores", default=None, metavar="C,...",
                   help="cores to measure nnopt's firmware on: "
                        + ", ".join(f"{c} ({b.board})" for c, b in BENCH_CORES.items())
                        + f" (default {','.join(DEFAULT_CORES)}; m7 is every row's base: "
                        "always measured)")
    p.add_argument("--profile", type=Path, metavar="MODEL",
                   help="print instructions per operator of one model instead")
    p.add_argument("--target", choices=("qemu-m7", "qemu-m3"), default="qemu-m7",
                   help="target of --profile (or --profile MODEL --cores CORE: any core)")
    p.add_argument("--inplace-ops", choices=("auto", "off", "force"),
                   help="--profile: plan with these in-place operators, without the board's "
                   "SRAM budget (as bench_below_bound.py)")
    p.add_argument("--tiling", choices=("auto", "off", "force"),
                   help="--profile: plan with this tiling mode, without the board's budget")
    p.add_argument("--max-extra-macs", type=float, default=15.0, metavar="PERCENT",
                   help="--profile with --tiling: the tiling's extra-MAC cap (default 15)")
    p.add_argument("--specialize", choices=SPECIALIZE_MODES, default="auto",
                   help="kernels specialised to the model in the generated code: 'auto' "
                   "where it pays (default), 'off', 'force'")
    p.add_argument("--tflm-timeout", type=float, default=600.0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    root = args.models_dir.resolve()
    cores_given = args.cores is not None
    cores = [c.strip() for c in (args.cores or ",".join(DEFAULT_CORES)).split(",")
             if c.strip()]
    bad_cores = [c for c in cores if c not in BENCH_CORES]
    if bad_cores:
        print(f"bench_firmware: unknown core(s) {', '.join(bad_cores)}; cores: "
              f"{', '.join(BENCH_CORES)}", file=sys.stderr)
        return 2
    args.cores = ",".join(cores)
    if args.profile:
        opts = None
        if args.inplace_ops or args.tiling:
            opts = PlanOptions(inplace_ops=args.inplace_ops or "off",
                               tiling=args.tiling or "off",
                               max_extra_macs=args.max_extra_macs)
        if not args.profile.is_file():
            print(f"bench_firmware: model file not found: {args.profile}\n"
                  "hint: the shared models are under ../shared/models/<group>/ "
                  "(e.g. mlperf_tiny/kws_ref_model.tflite)", file=sys.stderr)
            return 2
        target = args.profile.resolve()
        if converted_models.is_onnx(target):  # the .tflite the table's rows measure
            ((_, target, conv),) = convert_onnx([("", target)], root)
            if conv is not None and conv.error is not None:
                print(f"bench_firmware: {args.profile.name}: {conv.error}", file=sys.stderr)
                return 2
        if cores_given and len(cores) != 1:
            print("bench_firmware: --profile runs on one core: --cores CORE (one of "
                  f"{', '.join(BENCH_CORES)})\nhint: --profile MODEL --cores m4",
                  file=sys.stderr)
            return 2
        spec = (BENCH_CORES[cores[0]] if cores_given
                else BenchCore(args.target, M7_BOARD if args.target == "qemu-m7" else M3_BOARD))
        try:
            return profile(target, spec.target, opts, args.specialize, board_name=spec.board)
        except NnoptError as err:
            print(f"bench_firmware: {args.profile.name}: {err}", file=sys.stderr)
            return 2
    if "m3" not in cores:
        args.no_m3 = True
    extra_cores = tuple(c for c in cores if c not in ("m7", "m3"))
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"bench_firmware: unknown group(s) {', '.join(unknown)}; groups: "
              f"{', '.join(GROUPS)}", file=sys.stderr)
        return 2
    bad = [v for v in args.tflm_variants.split(",")
           if v.strip() and v.strip() not in tflm_firmware.ALL_VARIANTS]
    if bad:
        print(f"bench_firmware: unknown TFLM variant(s) {', '.join(bad)}; variants: "
              f"{', '.join(tflm_firmware.ALL_VARIANTS)}", file=sys.stderr)
        return 2
    if args.models:
        paths = [(m.resolve().parent.name, m.resolve()) for m in args.models]
    elif args.all:
        paths = [(q.parent.name, q) for q in
                 sorted([*root.rglob("*.tflite"), *root.rglob("*.onnx")],
                        key=lambda q: (q.parent.name, q.name))]
    elif args.stateful:
        paths = model_groups(root, ["stateful"])
    else:
        paths = model_groups(root, ["anchors"] if args.no_families else groups)
    missing = [q for _, q in paths if not q.is_file()]
    if missing:
        print("bench_firmware: model file(s) not found: "
              + ", ".join(os.fspath(q) for q in missing), file=sys.stderr)
        return 2
    runs = convert_onnx(paths, root)
    fw = tflm_context(args, [q for _, q, conv in runs if conv is None or conv.error is None])
    rows: list[Row] = []
    for group, path, conv in runs:
        print(f"bench_firmware: {path.name}", file=sys.stderr, flush=True)
        base = root if path.is_relative_to(root) else path.parent
        try:
            if conv is not None and conv.error is not None:
                row = unconverted_row(group, conv, fw)
            else:
                row = measure(path, base, m3=not args.no_m3,
                              tflm=not (args.no_tflm or args.no_tflm_min_arena),
                              timeout_s=args.tflm_timeout, specialize=args.specialize,
                              group=group, fw=fw, converted=conv, cores=extra_cores)
        except Exception as err:  # a bug or a model nothing reads: its row, not the run
            print(f"bench_firmware: {path.name}: {type(err).__name__}: {err}",
                  file=sys.stderr)
            row = Row(model=path.stem, path=os.fspath(path), ops=0, macs=0, group=group,
                      error=f"{type(err).__name__}: {str(err)[:160]}")
            _converted_fields(row, conv)
        rows.append(row)
        if args.json:  # after every model: a long run keeps what it measured
            write_doc(rows, args.json)
    print("\n".join(markdown(rows)))
    if args.json:
        write_doc(rows, args.json)
    if args.plot is not None and plot(rows, args.plot):
        print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
