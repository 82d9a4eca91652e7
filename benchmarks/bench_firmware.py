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
  board it does not fit; their own table. TFLM on those cores: not built yet.
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
those of the .tflite its row measures.

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
import json
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import converted_models
import tflm_cache
import tflm_firmware
from common import geomean, ratio
from converted_models import Converted
from oracle import (
    SEED,
    STATEFUL_INVOCATIONS,
    Oracle,
    compare_outputs,
    input_blobs,
    model_steps,
    oracle_outputs,
    stateful_tflite,
    tflm_min_arena,
)
from tflm_firmware import search_arena

from nnopt.arith import out_size_and_padding
from nnopt.boards import Board, load_board
from nnopt.driver import generate
from nnopt.elfcheck import check_elf
from nnopt.errors import BudgetError, NnoptError
from nnopt.firmware.linker import check_firmware_budget, firmware_arena_budget
from nnopt.firmware.toolchain import BuildSpec, Target, build, default_cache_dir, run
from nnopt.frontend.tflite import load_model_bytes, model_name
from nnopt.ir import ConvOptions, Graph
from nnopt.lowering.specialize import SPECIALIZE_MODES, specialized_symbols
from nnopt.memory_budget import check_budget
from nnopt.passes.regions import op_macs
from nnopt.paths import find_model, shared_models_dir
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import build_runtime, run_planned

M7_BOARD = "nucleo_f767zi"
M3_BOARD = "mps2_an385"


@dataclass(frozen=True)
class BenchCore:
    """A core nnopt's firmware is measured on: its target and board (docs/cores.md)."""

    target: Target
    board: str


#: Every core ``--cores`` can select, by short name (nnopt.firmware.cores). The M7 is
#: the base of every row (TFLM side by side); the M3 keeps its own columns and table;
#: the others fill ``Row.cores`` and the "every core" table. A new core is one entry.
BENCH_CORES: dict[str, BenchCore] = {
    "m7": BenchCore("qemu-m7", M7_BOARD),
    "m3": BenchCore("qemu-m3", M3_BOARD),
    "m4": BenchCore("qemu", "mps2_an386"),
    "m33": BenchCore("qemu", "mps2_an521"),
    "m55": BenchCore("qemu", "mps3_an547"),
    "m0": BenchCore("qemu", "qemu_cortex_m0"),
    "rv32": BenchCore("qemu", "qemu_riscv32"),  # RV32IMAC, QEMU virt (minstret)
}
#: Cores measured by default (the figures of benchmarks/README.md).
DEFAULT_CORES = ("m7", "m3")


@dataclass
class CoreFigures:
    """nnopt's firmware on one more core (``--cores``): instructions (first
    invocation), ROM and RAM (data + bss, arena included, stack reservation excluded)
    of its ELF on that board, its outputs against the interpreter's, or why not."""

    board: str
    instructions: int | None = None
    rom_bytes: int | None = None
    ram_bytes: int | None = None
    arena_bytes: int | None = None
    bit_exact: bool | None = None
    error: str | None = None

#: TFLM as Cortex-M7 release firmware under QEMU mps2-an500 as ANCHORS.md ("TFLM as
#: Cortex-M7 firmware") measured it elsewhere: (code bytes = ROM - .tflite, RAM = data +
#: bss, instructions per inference), reference kernels and CMSIS-NN kernels; written
#: into the JSON beside this run's own TFLM figures, for comparison.
ANCHORS: dict[str, dict[str, tuple[int, int, int]]] = {
    "person_detect": {"ref": (35_312, 82_424, 96_633_912),
                      "cmsis": (69_496, 82_444, 22_714_693)},
    "vww_96_int8": {"ref": (41_664, 100_788, 101_223_782),
                    "cmsis": (85_384, 100_840, 24_024_385)},
    "kws_ref_model": {"ref": (39_488, 22_900, 43_611_415),
                      "cmsis": (83_144, 22_952, 7_641_008)},
    "pretrainedResnet_quant": {"ref": (45_888, 54_468, 108_686_394),
                               "cmsis": (80_248, 55_128, 30_024_548)},
    "ad01_int8": {"ref": (18_276, 2_728, 1_948_661),
                  "cmsis": (29_924, 3_040, 582_506)},
}
ANCHOR_FILES = {
    "person_detect": "tflm/person_detect.tflite",
    "vww_96_int8": "mlperf_tiny/vww_96_int8.tflite",
    "kws_ref_model": "mlperf_tiny/kws_ref_model.tflite",
    "pretrainedResnet_quant": "mlperf_tiny/pretrainedResnet_quant.tflite",
    "ad01_int8": "mlperf_tiny/ad01_int8.tflite",
}

#: Stateful models (SVDF with int16 and int8 activation state, a float32 LSTM;
#: models/SOURCES.md).
STATEFUL_FILES = ("keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite",
                  "trained_lstm.tflite", "trained_lstm_int8.tflite")


@dataclass
class Row:
    model: str
    path: str
    ops: int
    macs: int
    group: str = ""
    instructions: int | None = None  # nnopt, Cortex-M7 (QEMU), the first invocation
    m3_instructions: int | None = None
    rom_bytes: int | None = None  # M7 ELF, all ROM regions
    ram_bytes: int | None = None  # M7 ELF, all RAM regions (stack reservation excluded)
    stack_reserved: int | None = None
    arena_bytes: int = 0
    scratch_bytes: int = 0
    runtime_code_bytes: int | None = None  # libnnrt.a text + rodata in the M7 link
    model_const_bytes: int | None = None  # weights and per-op constants (ROM)
    code_bytes: int | None = None  # ROM - model constants
    tflm_min_arena: int | None = None
    tflm_error: str | None = None
    kernel_symbols: dict[str, int] = field(default_factory=dict)
    specialize: str = "auto"
    specialized_rom_bytes: int | None = None  # <model>_spec_* functions (generated code)
    specialized_symbols: dict[str, int] = field(default_factory=dict)
    state_bytes: int = 0  # persistent state (variable tensors), beside the arena
    invocations: int = 1  # inferences per firmware run (state carried over)
    bit_exact: bool | None = None  # nnopt's outputs == the tflite-micro interpreter's
    # on the M7 and, when it ran, on the M3 firmware == the interpreter's or, where
    # they differ, == TFLM's own M3 firmware's (m3_same_as_tflm_m3)
    m3_bit_exact: bool | None = None  # the M3 firmware's == the interpreter's (None: no
    # M3 run)
    error: str | None = None  # why nnopt has no figures for this model
    # TFLM as the same kind of M7 firmware (tflm_firmware.py), per kernel variant:
    # instructions (first invocation), ROM (all flash regions) and RAM (data + bss,
    # the arena included, stack reservation excluded) of its ELF, its 32-bit arena
    # (arena_used_bytes(), with which the firmware was linked), the ROM minus the
    # .tflite array, stack used, whether its outputs match the interpreter's, or why
    # it could not be measured
    tflm_cmsis_nn_instructions: int | None = None
    tflm_cmsis_nn_rom_bytes: int | None = None
    tflm_cmsis_nn_ram_bytes: int | None = None
    tflm_cmsis_nn_arena_bytes: int | None = None
    tflm_cmsis_nn_code_bytes: int | None = None
    tflm_cmsis_nn_stack_bytes: int | None = None
    tflm_cmsis_nn_bit_exact: bool | None = None
    tflm_cmsis_nn_error: str | None = None
    tflm_cmsis_nn_measured_at: str | None = None  # UTC, when the figures were measured
    tflm_cmsis_nn_cached: bool = False  # the figures came from the cache (tflm_cache.py)
    tflm_ref_instructions: int | None = None
    tflm_ref_rom_bytes: int | None = None
    tflm_ref_ram_bytes: int | None = None
    tflm_ref_arena_bytes: int | None = None
    tflm_ref_code_bytes: int | None = None
    tflm_ref_stack_bytes: int | None = None
    tflm_ref_bit_exact: bool | None = None
    tflm_ref_error: str | None = None
    tflm_ref_measured_at: str | None = None
    tflm_ref_cached: bool = False
    tflm_cmsis_nn_outputs_sha256: list[str] | None = None
    tflm_ref_outputs_sha256: list[str] | None = None
    # TFLM as Cortex-M3 firmware (mps2_an385, the same harness; tflm_firmware.M3_VARIANTS),
    # measured beside nnopt's M3 firmware: the same fields
    tflm_cmsis_nn_m3_instructions: int | None = None
    tflm_cmsis_nn_m3_rom_bytes: int | None = None
    tflm_cmsis_nn_m3_ram_bytes: int | None = None
    tflm_cmsis_nn_m3_arena_bytes: int | None = None
    tflm_cmsis_nn_m3_code_bytes: int | None = None
    tflm_cmsis_nn_m3_stack_bytes: int | None = None
    tflm_cmsis_nn_m3_bit_exact: bool | None = None
    tflm_cmsis_nn_m3_error: str | None = None
    tflm_cmsis_nn_m3_measured_at: str | None = None
    tflm_cmsis_nn_m3_cached: bool = False
    tflm_cmsis_nn_m3_outputs_sha256: list[str] | None = None
    tflm_ref_m3_instructions: int | None = None
    tflm_ref_m3_rom_bytes: int | None = None
    tflm_ref_m3_ram_bytes: int | None = None
    tflm_ref_m3_arena_bytes: int | None = None
    tflm_ref_m3_code_bytes: int | None = None
    tflm_ref_m3_stack_bytes: int | None = None
    tflm_ref_m3_bit_exact: bool | None = None
    tflm_ref_m3_error: str | None = None
    tflm_ref_m3_measured_at: str | None = None
    tflm_ref_m3_cached: bool = False
    tflm_ref_m3_outputs_sha256: list[str] | None = None
    # nnopt's M3 outputs byte-identical with those of TFLM's M3 firmware (every M3
    # variant that ran): where the M3's libm (newlib's soft-float expf/logf) differs
    # from the host's, TFLM on the same core is the reference (None: not compared)
    m3_same_as_tflm_m3: bool | None = None
    ratio_cmsis_nn: float | None = None  # instructions / tflm_cmsis_nn_instructions
    ratio_ref: float | None = None  # instructions / tflm_ref_instructions
    ratio_m3_cmsis_nn: float | None = None  # m3_instructions / tflm_cmsis_nn_m3_instructions
    ratio_m3_ref: float | None = None  # m3_instructions / tflm_ref_m3_instructions
    # an ONNX model (path): both sides ran the .tflite nnopt convert wrote from it
    # nnopt on the other cores of --cores (m4, m33, m55, m0 ...), by short name
    cores: dict[str, CoreFigures] = field(default_factory=dict)
    convert_command: str | None = None  # the nnopt convert command line
    converted_path: str | None = None  # the .tflite measured
    converted_sha256: str | None = None
    onnx_same_code: bool | None = None  # nnopt's C from the .onnx == from the .tflite


def count_macs(g: Graph, ops: list[int] | None = None) -> int:
    """Multiply-accumulates of the conv, depthwise and FC ops (all, or those in ``ops``),
    and of any other op whose definition counts them (TRANSPOSE_CONV ...)."""
    macs = 0
    for op in g.ops:
        if ops is not None and op.index not in ops:
            continue
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            macs += op_macs(g, op)
            continue
        w = g.tensors[op.inputs[1]]
        y = g.tensors[op.outputs[0]]
        out = y.num_elements
        o = op.options
        if isinstance(o, ConvOptions) and o.fused_max_pool is not None:
            # The conv output before the fused pool.
            x = g.tensors[op.inputs[0]]
            oh, _ = out_size_and_padding(o.padding, x.shape[1], w.shape[1], o.stride_h,
                                         o.dilation_h)
            ow, _ = out_size_and_padding(o.padding, x.shape[2], w.shape[2], o.stride_w,
                                         o.dilation_w)
            out = y.shape[0] * oh * ow * y.shape[3]
        if op.opcode == "CONV_2D":
            macs += out * w.shape[1] * w.shape[2] * w.shape[3]
        elif op.opcode == "DEPTHWISE_CONV_2D":
            macs += out * w.shape[1] * w.shape[2]
        else:
            macs += out * w.shape[-1]
    return macs


# ----- link map: what the runtime library contributes -----

_MAP_LINE = re.compile(r"^\s*(\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")


def library_rom(map_file: Path, library: str = "libnnrt.a") -> tuple[int, dict[str, int]]:
    """Bytes of .text*/.rodata* input sections taken from ``library`` in a GNU ld map,
    and the size per input section name (``.text.nnrt_conv2d_s8`` -> size)."""
    total = 0
    per: dict[str, int] = {}
    pending: str | None = None
    in_map = False
    for line in map_file.read_text(errors="replace").splitlines():
        if line.startswith("Linker script and memory map"):
            in_map = True
            continue
        if not in_map:
            continue
        stripped = line.strip()
        if stripped.startswith((".text", ".rodata")) and len(stripped.split()) == 1:
            pending = stripped  # long section name: address and size on the next line
            continue
        m = _MAP_LINE.match(line)
        if m is None:
            pending = None
            continue
        name = m.group(1) or pending
        pending = None
        if name is None or not name.startswith((".text", ".rodata")):
            continue
        if f"{library}(" not in m.group(4):
            continue
        size = int(m.group(3), 16)
        if size:
            total += size
            per[name] = per.get(name, 0) + size
    return total, per


def model_const_bytes(exe: Path, model: str) -> int:
    """ROM of the model's constant data: weights (w<k>) and per-op arrays and params."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    total = 0
    with exe.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return 0
        for sym in symtab.iter_symbols():
            name = sym.name
            if sym["st_info"]["type"] != "STT_OBJECT" or not sym["st_size"]:
                continue
            if (re.fullmatch(r"w\d+", name) or re.fullmatch(r"op\d+_\w+", name)
                    or re.fullmatch(r"params(\.\d+)?", name) or re.fullmatch(r"pool(\.\d+)?",
                                                                              name)
                    or name.startswith(f"{model}_")) and not name.endswith("_arena"):
                total += sym["st_size"]
    return total


# ----- nnopt -----

def _plan(data: bytes, name: str, board: Board, opts: PlanOptions | None = None,
          specialize: str = "auto") -> PlannedModel:
    """The plan of the firmware: the board's budget, or ``opts`` (their own budget, if
    any) built for ``board``; kernels specialised to the model per ``specialize``."""
    g = load_model_bytes(data, name=name)
    pm = plan_model(g, _options(board, opts, specialize), source_bytes=data)
    check_budget(pm.plan, board)
    return pm


def _options(board: Board, opts: PlanOptions | None, specialize: str) -> PlanOptions:
    """The plan options of :func:`_plan`."""
    return replace(opts, specialize=specialize) if opts else PlanOptions(
        board=board, specialize=specialize)


def _first_line(err: BaseException) -> str:
    msg = err.message if isinstance(err, NnoptError) else str(err)
    return (msg.strip().splitlines() or [type(err).__name__])[0][:200]


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
    row = Row(model=path.stem, path=_rel(path, root), ops=0, macs=0, group=group,
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
                    setattr(row, f"tflm_{variant}_error", why)
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


def _rel(path: Path, root: Path) -> str:
    return os.fspath(path.relative_to(root)) if path.is_relative_to(root) else os.fspath(path)


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
        setattr(row, f"tflm_{variant}_error", "no .tflite to run: the conversion failed")
    return row


def convert_onnx(paths: list[tuple[str, Path]], root: Path
                 ) -> list[tuple[str, Path, Converted | None]]:
    """(group, file measured, its conversion) of every model: an ONNX model's file is
    the .tflite nnopt convert wrote (its own path when the conversion failed)."""
    out: list[tuple[str, Path, Converted | None]] = []
    cache = default_cache_dir() / "converted"
    for group, q in paths:
        if not converted_models.is_onnx(q):
            out.append((group, q, None))
            continue
        conv = converted_models.convert(q, _rel(q, root), cache)
        out.append((group, conv.tflite or q, conv))
    return out


def _measure_nnopt(row: Row, pm: PlannedModel, inputs: list[bytes], data: bytes, tmp: Path,
                   *, m3: bool, specialize: str) -> tuple[list[bytes], list[bytes] | None]:
    """Fill ``row`` with nnopt's firmware figures; return its outputs on the M7 and
    (``m3``) on the M3 firmware."""
    m7 = load_board(M7_BOARD)
    res = run_planned(pm, inputs, target="qemu-m7", board=m7, workdir=tmp / "m7")
    row.instructions = res.instructions
    assert res.executable is not None
    report = check_elf(res.executable, m7)
    row.rom_bytes = report.rom_used
    stack = sum(s.size for s in report.sections if s.category == "stack")
    row.stack_reserved = stack
    row.ram_bytes = report.ram_used - stack
    map_file = res.executable.parent / "firmware.map"
    if map_file.is_file():
        row.runtime_code_bytes, per = library_rom(map_file)
        row.kernel_symbols = dict(sorted(per.items(), key=lambda kv: -kv[1]))
    row.model_const_bytes = model_const_bytes(res.executable, pm.plan.model)
    row.specialized_symbols = specialized_symbols(res.executable, pm.plan.model)
    row.specialized_rom_bytes = sum(row.specialized_symbols.values())
    row.code_bytes = row.rom_bytes - row.model_const_bytes
    if m3:
        board3 = load_board(M3_BOARD)
        pm3 = _plan(data, pm.plan.model, board3, specialize=specialize)
        res3 = run_planned(pm3, inputs, target="qemu-m3", board=board3, workdir=tmp / "m3")
        row.m3_instructions = res3.instructions
        return list(res.outputs), list(res3.outputs)
    return list(res.outputs), None


def measure_core(core: str, data: bytes, name: str, inputs: list[bytes],
                 expected: Oracle | None, tmp: Path, specialize: str,
                 base: PlanOptions | None = None) -> CoreFigures:
    """nnopt's firmware on ``core`` (BENCH_CORES): planned with the bench's options (as
    the M7 and M3 rows: no tiling or in-place ops unless asked) for the board's SRAM
    less the firmware's stack, run on the board's QEMU machine; a model that does not
    fit the board gets the budget error."""
    spec = BENCH_CORES[core]
    board = load_board(spec.board)
    out = CoreFigures(board=spec.board)
    try:
        pm = _plan(data, name, board, replace(base or PlanOptions(), board=board,
                                              sram=firmware_arena_budget(board)),
                   specialize)
        check_firmware_budget(pm.plan, board)
    except BudgetError as err:
        out.error = f"does not fit {spec.board}: {_first_line(err)}"
        return out
    except NnoptError as err:
        out.error = _first_line(err)
        return out
    out.arena_bytes = pm.plan.arena_bytes
    try:
        res = run_planned(pm, inputs, target=spec.target, board=board, workdir=tmp)
    except NnoptError as err:
        out.error = _first_line(err)
        return out
    out.instructions = res.instructions
    assert res.executable is not None
    report = check_elf(res.executable, board)
    stack = sum(s.size for s in report.sections if s.category == "stack")
    out.rom_bytes, out.ram_bytes = report.rom_used, report.ram_used - stack
    if expected is not None:
        diff = compare_outputs(list(res.outputs), expected)
        out.bit_exact = diff is None
        if diff is not None:
            out.error = f"output differs from the interpreter's: {diff}"
    return out


# ----- TFLM firmware, side by side -----

@dataclass
class TflmContext:
    """Where TFLM's libraries come from (``reason``: why there are none)."""

    sources: tflm_firmware.Sources | None
    reason: str | None
    cache: Path
    jobs: int = 2
    variants: tuple[str, ...] = tflm_firmware.VARIANTS
    ops: set[str] = field(default_factory=set)  # operators of every model of the run
    libs: dict[str, tflm_firmware.Library | str] = field(default_factory=dict)
    results: tflm_cache.ResultCache | None = None  # measurements kept across runs
    _identity: dict[str, dict[str, Any]] = field(default_factory=dict)

    def identity(self, variant: str = "ref") -> dict[str, Any]:
        """The key parts shared by every model of the run for the core ``variant`` is
        built for (sources, harness, tools), computed once per core."""
        spec = tflm_firmware.variant_spec(variant)
        if spec.target not in self._identity:
            assert self.sources is not None
            s = self.sources
            self._identity[spec.target] = {
                "sources": tflm_cache.source_identity(s.tflm, s.cmsis_nn, s.cmsis),
                "harness": tflm_cache.harness_identity(spec.board, spec.target),
                "tools": tflm_cache.tool_identity()}
        return self._identity[spec.target]

    def library(self, variant: str) -> tflm_firmware.Library:
        """The variant's library, built on first use; TflmUnavailable if it cannot be."""
        if variant not in self.libs:
            assert self.sources is not None
            print(f"bench_firmware: TFLM {variant} library: TFLM's Makefile (built once, "
                  f"then reused from {self.cache})", file=sys.stderr, flush=True)
            try:
                self.libs[variant] = tflm_firmware.build_library(
                    self.sources, variant, self.cache, sorted(self.ops), jobs=self.jobs)
            except tflm_firmware.TflmUnavailable as err:
                self.libs[variant] = str(err)
        lib = self.libs[variant]
        if isinstance(lib, str):
            raise tflm_firmware.TflmUnavailable(lib)
        return lib


def tflm_context(args: argparse.Namespace, models: list[Path]) -> TflmContext | None:
    """The TFLM side of the run from the command line (None: not asked for): its
    libraries get the kernels of every operator of ``models``."""
    if args.no_tflm or args.no_tflm_firmware:
        return None
    cache = default_cache_dir() / "tflm"
    try:
        src = tflm_firmware.find_sources(args.tflm_dir, args.cmsis_nn_dir, args.cmsis_dir)
    except tflm_firmware.TflmUnavailable as err:
        print(f"bench_firmware: TFLM firmware columns empty: {err}", file=sys.stderr)
        return TflmContext(None, f"TFLM source missing: {err}", cache)
    ops: set[str] = set()
    for m in models:
        try:
            ops.update(tflm_firmware.model_operators(m.read_bytes()))
        except Exception:  # not a .tflite: its row says so
            continue
    asked = [v.strip() for v in args.tflm_variants.split(",") if v.strip()]
    variants = tuple(v for v in tflm_firmware.ALL_VARIANTS if v in asked
                     and not (args.no_m3 and v in tflm_firmware.M3_VARIANTS))
    return TflmContext(src, None, cache, jobs=args.jobs, ops=ops, variants=variants,
                       results=tflm_cache.ResultCache(cache / "results", args.tflm_cache))


#: Probe arena of a TFLM firmware when the interpreter's (64-bit) minimum is unknown:
#: what nucleo_f767zi's SRAM holds beside the stack and the harness.
PROBE_ARENA = 360 * 1024


def measure_tflm(row: Row, fw: TflmContext, variant: str, model: Path, inputs: list[bytes],
                 expected: Oracle, k: int, work: Path) -> None:
    """TFLM (``variant``) figures of one model: from the cache when an earlier run
    measured them with the same key (:mod:`tflm_cache`), else measured
    (:func:`measure_tflm_firmware`) and stored, failures the firmware itself reports
    included (not those of the library build or of QEMU)."""
    p = f"tflm_{variant}_"
    key: tuple[str, dict[str, Any]] | None = None
    if fw.results is not None and fw.results.mode != "off":
        key = tflm_cache.measurement_key(
            variant=variant, make_args=tflm_firmware.make_args(variant),
            model=model.read_bytes(), inputs=inputs, invocations=k,
            expected=expected.outputs, **fw.identity(variant))
        hit = fw.results.get(key[0])
        if hit is not None:
            for name in tflm_cache.MEASURED_FIELDS:
                setattr(row, p + name, getattr(hit, name))
            setattr(row, p + "measured_at", hit.measured_at)
            setattr(row, p + "cached", True)
            return
    try:
        lib = fw.library(variant)
    except tflm_firmware.TflmUnavailable as err:
        setattr(row, p + "error", str(err)[:300])
        return
    keep = measure_tflm_firmware(row, lib, model, inputs, expected, k, work)
    setattr(row, p + "measured_at", tflm_cache.now_utc())
    if keep and key is not None and fw.results is not None:
        fw.results.put(key[0], key[1], tflm_cache.Measurement(
            **{name: getattr(row, p + name) for name in tflm_cache.MEASURED_FIELDS},
            measured_at=getattr(row, p + "measured_at")))


def measure_tflm_firmware(row: Row, lib: tflm_firmware.Library, model: Path,
                          inputs: list[bytes], expected: Oracle, k: int, work: Path) -> bool:
    """TFLM firmware of one model with ``lib``: a probe build reads the arena TFLM
    needs on the 32-bit target, the measured build has exactly that arena. Returns
    whether the outcome belongs to the model (False: QEMU failed to run it)."""
    p = f"tflm_{lib.variant}_"
    board = load_board(tflm_firmware.variant_spec(lib.variant).board)
    try:
        work.mkdir(parents=True, exist_ok=True)
        harness = tflm_firmware.build_harness(lib, model, work)
        probe_arena = row.tflm_min_arena or PROBE_ARENA
        exe = tflm_firmware.link_firmware(harness, probe_arena, board)
        probe = tflm_firmware.run_firmware(exe, board, [], [], 1, target=lib.target)
        if probe.exit_code != 0 or probe.arena_used is None:
            raise tflm_firmware.TflmUnavailable(_tflm_failure(probe))
        arena = smallest_arena(harness, board, probe.arena_used, probe_arena)
        in_files = []
        for i, blob in enumerate(inputs):
            f = work / f"in{i}.bin"
            f.write_bytes(blob)
            in_files.append(f)
        out_files = [work / f"out{o}.bin" for o in range(len(expected.outputs))]
        exe = tflm_firmware.link_firmware(harness, arena, board)
        res = tflm_firmware.run_firmware(exe, board, in_files, out_files, k,
                                         target=lib.target)
        if res.exit_code != 0 or res.instructions is None:
            raise tflm_firmware.TflmUnavailable(_tflm_failure(res))
    except tflm_firmware.TflmUnavailable as err:
        setattr(row, p + "error", str(err)[:300])
        return True
    except NnoptError as err:  # the link (does not fit the board) or QEMU
        msg = _first_line(err)
        setattr(row, p + "error", msg if "fit" in msg else f"firmware: {msg}")
        return "fit" in msg
    report = check_elf(exe, board)
    stack = sum(s.size for s in report.sections if s.category == "stack")
    setattr(row, p + "instructions", res.instructions)
    setattr(row, p + "rom_bytes", report.rom_used)
    setattr(row, p + "ram_bytes", report.ram_used - stack)
    setattr(row, p + "arena_bytes", arena)
    setattr(row, p + "code_bytes", report.rom_used - tflm_firmware.model_array_bytes(exe))
    setattr(row, p + "stack_bytes", res.stack)
    got = [f.read_bytes() if f.is_file() else b"" for f in out_files]
    setattr(row, p + "outputs_sha256", [tflm_cache.sha256_hex(b) for b in got])
    diff = compare_outputs(got, expected)
    setattr(row, p + "bit_exact", diff is None)
    if diff is not None:
        setattr(row, p + "error", f"output differs from the interpreter's: {diff}")
    return True


def smallest_arena(harness: tflm_firmware.Harness, board: Board, used: int,
                   known_ok: int) -> int:
    """The smallest static arena with which the firmware allocates its tensors
    (:func:`search_arena`, each probe a link and a QEMU run without inference)."""
    def allocates(n: int) -> bool:
        exe = tflm_firmware.link_firmware(harness, n, board)
        return tflm_firmware.run_firmware(exe, board, [], [], 1,
                                          target=harness.lib.target).exit_code == 0

    return search_arena(allocates, used, known_ok)


def _tflm_failure(res: tflm_firmware.FirmwareRun) -> str:
    last = (res.log.splitlines() or ["no output"])[-1]
    return f"TFLM firmware exit {res.exit_code}: {last[:160]}"


def group_geomeans(rows: list[Row]) -> list[dict[str, Any]]:
    """Per model group (in first-seen order, then all): geometric means of
    ours / TFLM CMSIS-NN and ours / TFLM reference (Cortex-M7, and Cortex-M3:
    ``*_m3_*``) over the rows that have both."""
    groups: list[str] = []
    for r in rows:
        if r.group not in groups:
            groups.append(r.group)
    out = []
    for g in [*groups, "all"]:
        sel = [r for r in rows if g == "all" or r.group == g]
        doc: dict[str, Any] = {"group": g, "models": len(sel)}
        for key, label in (("ratio_cmsis_nn", "cmsis_nn"), ("ratio_ref", "ref"),
                           ("ratio_m3_cmsis_nn", "m3_cmsis_nn"), ("ratio_m3_ref", "m3_ref")):
            vals = [getattr(r, key) for r in sel if getattr(r, key) is not None]
            doc[f"{label}_n"] = len(vals)
            doc[f"geomean_{key}"] = geomean(vals)
        out.append(doc)
    return out


# ----- per-op profile -----

PROFILE_MAIN_C = r"""
/* bench_firmware.py --profile: instructions per operator (NNRT_TRACE hook). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/model.h"
#include "nnrt/port.h"

extern const nnrt_model_t NNRT_HARNESS_MODEL;

static uint64_t last;

static void put_u64(char *buf, size_t *n, uint64_t v)
{
    char d[21];
    size_t k = 0;
    do {
        d[k++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (k > 0) {
        buf[(*n)++] = d[--k];
    }
}

void nnrt_trace_tensor(uint32_t tensor, const void *data, size_t bytes)
{
    char line[64];
    size_t n = 0;
    uint64_t now = nnrt_port_counter();
    (void)data;
    (void)bytes;
    memcpy(line, "op-tensor ", 10);
    n = 10;
    put_u64(line, &n, tensor);
    line[n++] = ' ';
    put_u64(line, &n, now - last);
    line[n] = '\0';
    nnrt_port_log(line);
    last = nnrt_port_counter();
}

int main(void)
{
    uint32_t seed = 12345u;
    for (uint32_t i = 0; i < NNRT_HARNESS_MODEL.n_inputs; ++i) {
        uint8_t *p = (uint8_t *)NNRT_HARNESS_MODEL.input(i);
        for (size_t k = 0; k < NNRT_HARNESS_MODEL.inputs[i].bytes; ++k) {
            seed = seed * 1664525u + 1013904223u;
            p[k] = (uint8_t)(seed >> 24);
        }
    }
    last = nnrt_port_counter();
    return NNRT_HARNESS_MODEL.invoke() == NNRT_OK ? 0 : 5;
}
"""


def profile(path: Path, target: Target, opts: PlanOptions | None = None,
            specialize: str = "auto") -> int:
    """Instructions per op; ``opts``: plan with these options (default: the board's)."""
    board = load_board(M7_BOARD if target == "qemu-m7" else M3_BOARD)
    pm = _plan(path.read_bytes(), path.stem, board, opts, specialize)
    g = pm.graph
    with tempfile.TemporaryDirectory(prefix="bench-prof-") as tmp:
        gen = generate(pm, Path(tmp)).sources
        main_c = Path(tmp) / "profile_main.c"
        main_c.write_text(PROFILE_MAIN_C)
        lib = build_runtime(target, board=board)
        exe = build(BuildSpec(target=target, sources=(gen.c_file, main_c),
                              include_dirs=(Path(tmp),), board=board, libraries=(lib,),
                              defines={"NNRT_HARNESS_MODEL": gen.symbol,
                                       "NNRT_TRACE": "1"}))
        res = run(exe, target, [], board=board)
    if res.exit_code != 0:
        print(res.stdout + res.stderr, file=sys.stderr)
        return 1
    per_tensor: dict[int, int] = {}
    for m in re.finditer(r"op-tensor (\d+) (\d+)", res.stdout):
        per_tensor.setdefault(int(m.group(1)), int(m.group(2)))
    total = 0
    kind = {e.op: e.kind for e in pm.plan.inplace_ops}
    staged: dict[int, list[int]] = {}  # last op of a stage -> its ops (traced together)
    for n_st, st in enumerate(pm.plan.stages):
        staged[st.ops[-1]] = list(st.ops)
        for i in st.ops:
            kind[i] = f"stage {n_st} {st.grid[0]}x{st.grid[1]}"
    print(f"plan: arena {pm.plan.arena_bytes:,} B, options {pm.plan.options}")
    print("| op | opcode | below the bound | input | weights | output | MACs | instructions "
          "| instr/MAC |")
    print("|---:|---|---|---|---|---|---:|---:|---:|")
    for idx in pm.plan.schedule:
        op = g.op_by_index[idx]
        n = per_tensor.get(op.outputs[0], 0)
        total += n
        macs = count_macs(g, staged.get(idx, [idx]))  # a stage: all its ops' MACs
        x = g.tensors[op.inputs[0]].shape if op.inputs and op.inputs[0] >= 0 else ()
        w = (g.tensors[op.inputs[1]].shape if len(op.inputs) > 1 and op.inputs[1] >= 0
             and g.tensors[op.inputs[1]].is_constant else ())
        y = g.tensors[op.outputs[0]].shape
        ipm = f"{n / macs:.2f}" if macs else ""
        print(f"| {idx} | {op.opcode} | {kind.get(idx, '')} | {list(x)} | "
              f"{list(w) if w else ''} | {list(y)} | "
              f"{macs:,} | {n:,} | {ipm} |")
    print(f"\ntotal {total:,} instructions ({target}), {count_macs(g):,} MACs")
    return 0


# ----- output -----

def _n(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _r(a: int | None, b: int | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def _f(x: float | None, bold_above_1: bool = False) -> str:
    if x is None:
        return "-"
    return f"**{x:.2f}**" if bold_above_1 and x > 1 else f"{x:.2f}"


def _exact(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "**no**")


def _tflm_mem(r: Row, variant: str) -> str:
    rom = getattr(r, f"tflm_{variant}_rom_bytes")
    if rom is None:
        return "-"
    return (f"{rom:,} / {_n(getattr(r, f'tflm_{variant}_ram_bytes'))} / "
            f"{_n(getattr(r, f'tflm_{variant}_arena_bytes'))} / "
            f"{_n(getattr(r, f'tflm_{variant}_code_bytes'))}")


def notes(r: Row) -> str:
    """Why a row lacks figures (nnopt's, then each TFLM variant's)."""
    parts = []
    if r.error:
        parts.append(f"nnopt: {r.error}")
    if r.m3_bit_exact is False and r.m3_same_as_tflm_m3:
        parts.append("nnopt M3: differs from the interpreter, identical to TFLM's M3 "
                     "firmware (the M3's libm) ¹⁰")
    for core, variants in (("", ("cmsis_nn", "ref")), (" M3", ("cmsis_nn_m3", "ref_m3"))):
        errs = [(label, getattr(r, f"tflm_{v}_error"))
                for v, label in zip(variants, ("TFLM CMSIS-NN", "TFLM ref"), strict=True)]
        errs = [(label, e) for label, e in errs if e]
        if len(errs) == 2 and errs[0][1] == errs[1][1]:  # the same reason once
            errs = [("TFLM", errs[0][1])]
        parts += [f"{label}{core}: {e}" for label, e in errs]
    if r.converted_path is not None:
        same = {True: "nnopt's C from the .onnx is the same",
                False: "nnopt's C from the .onnx differs",
                None: "nnopt's C from the .onnx not compared"}[r.onnx_same_code]
        parts.append(f"ONNX: both run `{r.convert_command}` ⁹ ({same})")
    cached = sorted({str(getattr(r, f"tflm_{v}_measured_at"))
                     for v in tflm_firmware.ALL_VARIANTS if getattr(r, f"tflm_{v}_cached")})
    if cached:
        parts.append("TFLM from the cache ⁸, measured " + ", ".join(cached))
    return "; ".join(p.replace("|", "/") for p in parts)


def markdown(rows: list[Row]) -> list[str]:
    out = [
        "| group | model | MACs | nnopt M7 instr | TFLM CMSIS-NN M7 | TFLM ref M7 | "
        "ours/CMSIS-NN | ours/ref | instr/MAC | M3 instr | bit-exact ¹ | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        ipm = f"{r.instructions / r.macs:.2f}" if r.instructions and r.macs else "-"
        exact = " / ".join(_exact(x) for x in (r.bit_exact, r.tflm_cmsis_nn_bit_exact,
                                               r.tflm_ref_bit_exact))
        out.append(f"| {r.group} | {r.model} | {_n(r.macs)} | {_n(r.instructions)} | "
                   f"{_n(r.tflm_cmsis_nn_instructions)} | {_n(r.tflm_ref_instructions)} | "
                   f"{_f(r.ratio_cmsis_nn, True)} | {_f(r.ratio_ref, True)} | {ipm} | "
                   f"{_n(r.m3_instructions)} | {exact} | {notes(r)} |")
    out += [
        "",
        "| group | models | ours/CMSIS-NN geomean (n) | ours/ref geomean (n) | "
        "M3: ours/CMSIS-NN geomean (n) | M3: ours/ref geomean (n) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for g in group_geomeans(rows):
        out.append(f"| {g['group']} | {g['models']} | "
                   f"{_f(g['geomean_ratio_cmsis_nn'])} ({g['cmsis_nn_n']}) | "
                   f"{_f(g['geomean_ratio_ref'])} ({g['ref_n']}) | "
                   f"{_f(g['geomean_ratio_m3_cmsis_nn'])} ({g['m3_cmsis_nn_n']}) | "
                   f"{_f(g['geomean_ratio_m3_ref'])} ({g['m3_ref_n']}) |")
    out += m3_markdown(rows)
    out += cores_markdown(rows)
    out += [
        "",
        "| model | ROM | runtime code ² | spec ROM ⁶ | code ³ | RAM ⁴ | arena (scratch) | "
        "TFLM CMSIS-NN ROM / RAM / arena / code ⁷ | TFLM ref ROM / RAM / arena / code ⁷ | "
        "TFLM min arena (64-bit host) ⁵ |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
        out.append(f"| {r.model} | {_n(r.rom_bytes)} | {_n(r.runtime_code_bytes)} | "
                   f"{_n(r.specialized_rom_bytes)} | {_n(r.code_bytes)} | "
                   f"{_n(r.ram_bytes)} | {r.arena_bytes:,} ({r.scratch_bytes:,}) | "
                   f"{_tflm_mem(r, 'cmsis_nn')} | {_tflm_mem(r, 'ref')} | {tmin} |")
    stateful = [r for r in rows if r.invocations > 1]
    if stateful:
        out += [
            "",
            "| stateful model | invocations | M7 instr / inference | state | arena (scratch) | "
            "arena + state | TFLM CMSIS-NN arena (32-bit) ⁷ | TFLM min arena (64-bit host) ⁵ "
            "| ours / TFLM CMSIS-NN |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in stateful:
            total = r.arena_bytes + r.state_bytes
            tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
            out.append(f"| {r.model} | {r.invocations} | {_n(r.instructions)} | "
                       f"{r.state_bytes:,} | {r.arena_bytes:,} ({r.scratch_bytes:,}) | "
                       f"{total:,} | {_n(r.tflm_cmsis_nn_arena_bytes)} | {tmin} | "
                       f"{_r(total, r.tflm_cmsis_nn_arena_bytes)} |")
    out += [
        "",
        "¹ outputs byte-identical with the tflite-micro Python interpreter's (every "
        "invocation): nnopt (its M7 firmware and, unless --no-m3, its M3 firmware: "
        "the M3 column's run is checked too) / TFLM CMSIS-NN / TFLM ref. Instructions: "
        "the first "
        "invocation, counted around invoke()/Invoke() with the same SysTick counter "
        "(QEMU -icount shift=0, 40-instruction resolution) in firmware with the same "
        "startup, port and linker script (nucleo_f767zi regions, QEMU mps2-an500); "
        "TFLM built by its own Makefile (cortex_m_generic, cortex-m7+fp, release). "
        "² code + rodata linked from libnnrt.a "
        "(kernels, core). ³ ROM minus the "
        "model's constant data (weights, per-op parameters): harness, port, libc included, "
        "like TFLM's ROM minus the .tflite. ⁴ data + bss (arena included), stack "
        "reservation excluded (TFLM's RAM column excludes its stack too). ⁵ measured now "
        "with the tflite-micro Python interpreter by bisection. ⁶ kernels specialised to "
        "the model in its generated code (`<model>_spec_*` functions, ELF symbol sizes, "
        f"--specialize {rows[0].specialize if rows else 'auto'}), included in code ³. "
        "⁷ TFLM's ELF: ROM (the whole .tflite included), RAM (data + bss, stack "
        "excluded), its static arena (arena_used_bytes() on the 32-bit target, the "
        "firmware linked with exactly that), code = ROM minus the .tflite array. "
        "⁸ TFLM's figures of an earlier run with the same model, inputs, interpreter "
        "outputs, TFLM / CMSIS-NN / CMSIS source, harness, compilers, QEMU and flags "
        "(benchmarks/tflm_cache.py; --tflm-cache refresh measures them again). "
        "⁹ TFLM reads no ONNX: nnopt, TFLM and the interpreter run the .tflite this "
        "command writes (the graph nnopt imports from the ONNX file; "
        "benchmarks/converted_models.py). "
        "¹⁰ Cortex-M3 (mps2_an385, QEMU mps2-an385; TFLM's cortex_m_generic cortex-m3 "
        "build, soft float, CMSIS-NN's portable C path): outputs against the "
        "interpreter's, and nnopt's against TFLM's own M3 firmwares' (byte-identical: "
        "'= TFLM'). The M3's newlib has soft-float expf/logf that differ from the "
        "host's glibc in the last bit for some inputs: a float model using them differs "
        "from the host interpreter on the M3 in TFLM too, and nnopt is then bit-exact "
        "with TFLM on that core.",
    ]
    return out


def m3_markdown(rows: list[Row]) -> list[str]:
    """The Cortex-M3 table: nnopt's M3 firmware beside TFLM's (when any ran)."""
    if not any(r.m3_instructions is not None or r.tflm_ref_m3_instructions is not None
               or r.tflm_cmsis_nn_m3_instructions is not None for r in rows):
        return []
    out = [
        "",
        "| group | model | nnopt M3 instr | TFLM CMSIS-NN M3 | TFLM ref M3 | "
        "ours/CMSIS-NN M3 | ours/ref M3 | bit-exact M3 ¹⁰: nnopt / = TFLM / "
        "TFLM CMSIS-NN / TFLM ref |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        same = {None: "-", True: "yes", False: "**no**"}[r.m3_same_as_tflm_m3]
        exact = " / ".join([_exact(r.m3_bit_exact), same, _exact(r.tflm_cmsis_nn_m3_bit_exact),
                            _exact(r.tflm_ref_m3_bit_exact)])
        out.append(f"| {r.group} | {r.model} | {_n(r.m3_instructions)} | "
                   f"{_n(r.tflm_cmsis_nn_m3_instructions)} | {_n(r.tflm_ref_m3_instructions)} | "
                   f"{_f(r.ratio_m3_cmsis_nn, True)} | {_f(r.ratio_m3_ref, True)} | {exact} |")
    return out


def cores_markdown(rows: list[Row]) -> list[str]:
    """nnopt's firmware on the other cores of ``--cores``: instructions, ROM / RAM and
    bit-exact per core, the M7 beside them (TFLM on these cores: not measured yet)."""
    cores = sorted({c for r in rows for c in r.cores},
                   key=lambda c: list(BENCH_CORES).index(c))
    if not cores:
        return []
    head = " | ".join(f"{c} ({BENCH_CORES[c].board}) instr | ROM / RAM | bit-exact"
                      for c in cores)
    out = ["", f"| group | model | M7 instr | {head} |",
           "|---|---|---:|" + "---:|---|---|" * len(cores)]
    for r in rows:
        cells = []
        for c in cores:
            f = r.cores.get(c)
            if f is None:
                cells.append("- | - | -")
            elif f.instructions is None:
                cells.append(f"- | - | {f.error or '-'}")
            else:
                cells.append(f"{_n(f.instructions)} | {_n(f.rom_bytes)} / {_n(f.ram_bytes)} | "
                             f"{_exact(f.bit_exact)}")
        out.append(f"| {r.group} | {r.model} | {_n(r.instructions)} | {' | '.join(cells)} |")
    return out


def plot(rows: list[Row], dest: Path) -> bool:
    """A PNG of ours / TFLM instructions per model (CMSIS-NN and reference kernels, log
    scale, 1 = parity); False when there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r.ratio_cmsis_nn is not None or r.ratio_ref is not None]
    if not sel:
        return False
    from matplotlib.ticker import FuncFormatter, LogLocator

    fig, ax = plt.subplots(figsize=(max(7.0, 0.5 * len(sel) + 2), 5.0))
    xs = list(range(len(sel)))
    w = 0.4
    series = (("cmsis_nn", "nnopt / TFLM CMSIS-NN", -w / 2),
              ("ref", "nnopt / TFLM reference", w / 2))
    for variant, label, dx in series:
        vals = [getattr(r, f"ratio_{variant}") for r in sel]
        bars = ax.bar([x + dx for x in xs], [v or 0 for v in vals], w, label=label)
        for b, v in zip(bars, vals, strict=True):
            if v:
                ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, v), ha="center",
                            va="bottom", fontsize=6)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    top = max([r.ratio_cmsis_nn or 0 for r in sel] + [r.ratio_ref or 0 for r in sel] + [1])
    bottom = min(v for r in sel for v in (r.ratio_cmsis_nn, r.ratio_ref) if v)
    ax.set_ylim(bottom / 1.5, top * 1.5)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{r.model} ({r.group})" for r in sel], rotation=60, ha="right",
                       fontsize=7)
    ax.set_ylabel("nnopt / TFLM instructions (Cortex-M7, QEMU)")
    ax.set_title("Instructions per inference, nnopt / TFLM (< 1: nnopt runs fewer)",
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dest, dpi=120)
    plt.close(fig)
    return True


def model_groups(root: Path, groups: list[str]) -> list[tuple[str, Path]]:
    """(group, model file) of every model of ``groups``, in that order: the ANCHORS.md
    models, the stateful ones, or MODELS_DIR/<group>/'s .tflite and .onnx files
    (families, keras, realworld, onnx, tflm: an anchor is listed once, as an anchor)."""
    out: list[tuple[str, Path]] = []
    anchors = {Path(rel) for rel in ANCHOR_FILES.values()}
    for g in groups:
        if g == "anchors":
            out += [(g, root / rel if (root / rel).is_file() else find_model(rel) or root / rel)
                    for rel in ANCHOR_FILES.values()]
        elif g == "stateful":
            out += [(g, find_model(rel) or root / rel) for rel in STATEFUL_FILES]
        else:
            out += [(g, p) for p in sorted([*(root / g).glob("*.tflite"),
                                            *(root / g).glob("*.onnx")])
                    if Path(g, p.name) not in anchors]
    return out


GROUPS = ("anchors", "families", "keras", "realworld", "stateful", "onnx", "tflm")


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
                   help="TFLM builds to measure: reference / CMSIS-NN kernels on the "
                   "Cortex-M7, and the same on the Cortex-M3 (*_m3; not with --no-m3) "
                   "(default: %(default)s)")
    p.add_argument("--jobs", type=int, default=2, help="make -j of TFLM's library builds")
    p.add_argument("--tflm-cache", choices=tflm_cache.MODES, default="use",
                   help="TFLM's measurements kept across runs (tflm_cache.py, keyed by the "
                   "model, inputs, TFLM/CMSIS-NN source, harness, compiler and flags): "
                   "'use' them (default), 'refresh' (measure again, store), 'off'")
    p.add_argument("--no-m3", action="store_true", help="skip the Cortex-M3 runs")
    p.add_argument("--cores", default=",".join(DEFAULT_CORES), metavar="C,...",
                   help="cores to measure nnopt's firmware on: "
                        + ", ".join(f"{c} ({b.board})" for c, b in BENCH_CORES.items())
                        + f" (default {','.join(DEFAULT_CORES)}; m7 is every row's base: "
                        "always measured)")
    p.add_argument("--profile", type=Path, metavar="MODEL",
                   help="print instructions per operator of one model instead")
    p.add_argument("--target", choices=("qemu-m7", "qemu-m3"), default="qemu-m7",
                   help="target of --profile")
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
        try:
            return profile(target, args.target, opts, args.specialize)
        except NnoptError as err:
            print(f"bench_firmware: {args.profile.name}: {err}", file=sys.stderr)
            return 2
    cores = [c.strip() for c in args.cores.split(",") if c.strip()]
    bad_cores = [c for c in cores if c not in BENCH_CORES]
    if bad_cores:
        print(f"bench_firmware: unknown core(s) {', '.join(bad_cores)}; cores: "
              f"{', '.join(BENCH_CORES)}", file=sys.stderr)
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


def write_doc(rows: list[Row], dest: str) -> None:
    """The JSON document: the rows, the geometric means per group, the run's setup."""
    doc: dict[str, Any] = {"seed": SEED, "m7_board": M7_BOARD, "m3_board": M3_BOARD,
                           "core_boards": {c: b.board for c, b in BENCH_CORES.items()},
                           "tflm_make": list(tflm_firmware.TFLM_MAKE_ARGS),
                           "anchors_from_anchors_md": ANCHORS,
                           "geomeans": group_geomeans(rows),
                           "rows": [asdict(r) for r in rows]}
    Path(dest).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
