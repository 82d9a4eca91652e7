#!/usr/bin/env python3
"""nnopt firmware against TensorFlow Lite Micro: speed, ROM and RAM per model.

For every model that fits nucleo_f767zi (default: the five models of ANCHORS.md's TFLM
firmware table, then every model of MODELS_DIR/families/ that nnopt imports and can
compile, so family models join as their operators land; ``--no-families`` for the
anchors alone; ``--all`` for every ``*.tflite`` under MODELS_DIR), in one run:

- **instructions per inference** of nnopt's generated firmware under QEMU with
  ``-icount shift=0`` (SysTick, 40-instruction resolution, deterministic): Cortex-M7
  (``qemu-m7``, board nucleo_f767zi, DSP/SIMD kernels) and Cortex-M3 (``qemu-m3``, board
  mps2_an385, no DSP extension: the portable C kernels). Same random input (seed 1).
- **ROM / RAM** of the M7 ELF from :func:`nnopt.elfcheck.check_elf` (the real board's
  regions): ROM = text + rodata (weights included) + data load image, RAM = data + bss
  (arena included), without the stack reservation (stack measured separately by the
  harness on QEMU is not included either side; TFLM's table lists its stack apart).
- **runtime code**: bytes of code and read-only data the linker took from the nnrt
  runtime library (``libnnrt.a``: kernels and core), from the link map; the firmware
  harness, the bare-metal port and newlib are not in it. "code" = ROM minus the
  model's constant data (weights and per-op parameters) = everything TFLM's "code"
  column (ROM minus the .tflite) also holds (harness, port, libc included).
- **TFLM min arena**: the smallest ``arena_size`` with which the ``tflite-micro`` Python
  interpreter loads the model and runs one inference, found by bisection (a 64-bit host
  figure: its persistent part is larger than on a 32-bit MCU; ANCHORS.md has the
  32-bit firmware arena).
- **TFLM firmware figures** (instructions, code size, RAM) quoted from
  /work/shared/docs/ANCHORS.md (TFLM built as cortex-m7 release firmware and run under
  the same QEMU; it cannot be rebuilt here), with the ratios ours / TFLM.

Stateful models (variable tensors: SVDF; ``--stateful`` measures TFLM's two keyword
benchmark models shipped in ``models/``) run ``STATEFUL_INVOCATIONS`` inferences in
sequence in one firmware run, the state carried over (instructions: the first); their
table adds the persistent state beside the arena, against TFLM's minimum arena, which
holds its variable tensors too.

``--profile MODEL`` prints instructions per operator instead (QEMU, one inference;
the generated code is built with NNRT_TRACE and a harness that reads the instruction
counter after every operator), with MACs and instructions per MAC.

    python benchmarks/bench_firmware.py [--all | --stateful] [--no-families] [--models-dir DIR]
                                        [--json PATH] [--no-tflm] [--no-m3]
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

from common import run_worker

from nnopt.boards import Board, load_board
from nnopt.budget import check_budget
from nnopt.driver import generate
from nnopt.elfcheck import check_elf
from nnopt.errors import BudgetError, NnoptError
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.inputs import random_inputs
from nnopt.ir import ConvOptions, Graph
from nnopt.lowering import check_graph
from nnopt.lowering.conv import out_size_and_padding
from nnopt.lowering.specialize import SPECIALIZE_MODES, specialized_symbols
from nnopt.passes.regions import op_macs
from nnopt.paths import find_model, shared_models_dir
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import build_runtime, run_planned

M7_BOARD = "nucleo_f767zi"
M3_BOARD = "mps2_an385"
SEED = 1

#: TFLM as Cortex-M7 release firmware under QEMU mps2-an500, quoted from ANCHORS.md
#: ("TFLM as Cortex-M7 firmware"): (code bytes = ROM - .tflite, RAM = data + bss,
#: instructions per inference), reference kernels and CMSIS-NN kernels.
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
                  "trained_lstm.tflite")
STATEFUL_INVOCATIONS = 4


@dataclass
class Row:
    model: str
    path: str
    ops: int
    macs: int
    m7_instructions: int | None = None
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
    error: str | None = None


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


# ----- TFLM minimum arena (child process) -----

def tflm_worker(model: Path) -> int:
    """Child: bisect the smallest arena_size that loads and runs the model."""
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime

    data = model.read_bytes()
    g = load_model_bytes(data)
    inputs = random_inputs(g, SEED)

    def probe(n: int) -> bool:
        try:
            interp = runtime.Interpreter.from_bytes(data, arena_size=n)
            for i, x in enumerate(inputs):
                interp.set_input(np.ascontiguousarray(x), i)
            interp.invoke()
        except (RuntimeError, ValueError):
            return False
        return True

    def ok(n: int) -> bool:
        # in a forked child: the interpreter crashes (SIGSEGV) on some arenas that are
        # too small (TFLM's keyword_scrambled), which counts as a failure there
        pid = os.fork()
        if pid == 0:
            os._exit(0 if probe(n) else 1)
        _, status = os.waitpid(pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    hi = 1 << 16
    while not ok(hi):
        hi *= 2
        if hi > 1 << 30:
            print("tflm: does not load with 1 GiB", file=sys.stderr)
            return 1
    lo = 0  # fails (or untested 0)
    while hi - lo > 16:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    # TFLM aligns internally; finish byte-exact over the last 16.
    while hi - 1 > lo and ok(hi - 1):
        hi -= 1
    print(f"tflm-min-arena {hi}")
    return 0


def tflm_min_arena(model: Path, timeout_s: float) -> tuple[int | None, str | None]:
    return run_worker(Path(__file__).resolve(), model, r"tflm-min-arena (\d+)", timeout_s,
                      stream="stdout")

# ----- nnopt -----

def _plan(data: bytes, name: str, board: Board, opts: PlanOptions | None = None,
          specialize: str = "auto") -> PlannedModel:
    """The plan of the firmware: the board's budget, or ``opts`` (their own budget, if
    any) built for ``board``; kernels specialised to the model per ``specialize``."""
    g = load_model_bytes(data, name=name)
    opts = replace(opts, specialize=specialize) if opts else PlanOptions(
        board=board, specialize=specialize)
    pm = plan_model(g, opts, source_bytes=data)
    check_budget(pm.plan, board)
    return pm


def measure(path: Path, root: Path, *, m3: bool, tflm: bool, timeout_s: float,
            specialize: str = "auto") -> Row:
    data = path.read_bytes()
    name = path.stem
    m7 = load_board(M7_BOARD)
    pm = _plan(data, name, m7, specialize=specialize)
    # a stateful model: several inferences in sequence (each input file holds them all)
    k = STATEFUL_INVOCATIONS if pm.plan.state else 1
    steps = [random_inputs(pm.source, SEED + j) for j in range(k)]
    inputs = [b"".join(s[i].tobytes() for s in steps) for i in range(len(steps[0]))]
    row = Row(model=name, path=os.fspath(path.relative_to(root)), ops=len(pm.graph.ops),
              macs=count_macs(pm.graph), arena_bytes=pm.plan.arena_bytes,
              scratch_bytes=sum(s.size for s in pm.plan.scratch), specialize=specialize,
              state_bytes=pm.plan.state_bytes, invocations=k)
    with tempfile.TemporaryDirectory(prefix="bench-fw-") as tmp:
        res = run_planned(pm, inputs, target="qemu-m7", board=m7, workdir=Path(tmp) / "m7")
        row.m7_instructions = res.instructions
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
            pm3 = _plan(data, name, board3, specialize=specialize)
            res3 = run_planned(pm3, inputs, target="qemu-m3", board=board3,
                               workdir=Path(tmp) / "m3")
            row.m3_instructions = res3.instructions
    if tflm:
        row.tflm_min_arena, row.tflm_error = tflm_min_arena(path, timeout_s)
    return row


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

def family_models(root: Path) -> list[Path]:
    """The models of ``root``/families/ that nnopt imports and has kernels for (the
    others are reported on stderr and left out)."""
    out = []
    for path in sorted((root / "families").glob("*.tflite")):
        try:
            check_graph(load_model_bytes(path.read_bytes(), name=path.stem))
        except NnoptError as err:
            print(f"bench_firmware: {path.name} skipped: {err.message.splitlines()[0]}",
                  file=sys.stderr)
            continue
        out.append(path)
    return out


def _n(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _r(a: int | None, b: int | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def markdown(rows: list[Row]) -> list[str]:
    out = [
        "| model | MACs | M7 instr | M3 instr | TFLM ref M7 ¹ | TFLM CMSIS-NN M7 ¹ | "
        "ours/ref | ours/CMSIS-NN | instr/MAC M7 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        a = ANCHORS.get(r.model)
        ref = a["ref"][2] if a else None
        cm = a["cmsis"][2] if a else None
        ipm = f"{r.m7_instructions / r.macs:.2f}" if r.m7_instructions and r.macs else "-"
        ratio_cm = _r(r.m7_instructions, cm)
        if cm and r.m7_instructions and r.m7_instructions > cm:
            ratio_cm = f"**{ratio_cm}**"
        out.append(f"| {r.model} | {_n(r.macs)} | {_n(r.m7_instructions)} | "
                   f"{_n(r.m3_instructions)} | {_n(ref)} | {_n(cm)} | "
                   f"{_r(r.m7_instructions, ref)} | {ratio_cm} | {ipm} |")
    out += [
        "",
        "| model | ROM | runtime code ² | spec ROM ⁶ | code ³ | TFLM code ref / CMSIS-NN ¹ | "
        "RAM ⁴ | arena (scratch) | TFLM RAM ref / CMSIS-NN ¹ | TFLM min arena (64-bit host) ⁵ |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        a = ANCHORS.get(r.model)
        tcode = f"{a['ref'][0]:,} / {a['cmsis'][0]:,}" if a else "-"
        tram = f"{a['ref'][1]:,} / {a['cmsis'][1]:,}" if a else "-"
        tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
        out.append(f"| {r.model} | {_n(r.rom_bytes)} | {_n(r.runtime_code_bytes)} | "
                   f"{_n(r.specialized_rom_bytes)} | {_n(r.code_bytes)} | {tcode} | "
                   f"{_n(r.ram_bytes)} | "
                   f"{r.arena_bytes:,} ({r.scratch_bytes:,}) | {tram} | {tmin} |")
    stateful = [r for r in rows if r.state_bytes]
    if stateful:
        out += [
            "",
            "| stateful model | invocations | M7 instr / inference | state | arena (scratch) | "
            "arena + state | TFLM min arena (64-bit host) ⁵ | ours / TFLM |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in stateful:
            total = r.arena_bytes + r.state_bytes
            tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
            out.append(f"| {r.model} | {r.invocations} | {_n(r.m7_instructions)} | "
                       f"{r.state_bytes:,} | {r.arena_bytes:,} ({r.scratch_bytes:,}) | "
                       f"{total:,} | {tmin} | {_r(total, r.tflm_min_arena)} |")
    out += [
        "",
        "¹ quoted from ANCHORS.md (TFLM release firmware, cortex-m7, same QEMU; not rebuilt "
        "here): the anchor models only, so the family models (and any other) show '-' "
        "there; TFLM's arena of every model is ⁵. ² code + rodata linked from libnnrt.a "
        "(kernels, core). ³ ROM minus the "
        "model's constant data (weights, per-op parameters): harness, port, libc included, "
        "like TFLM's ROM minus the .tflite. ⁴ data + bss (arena included), stack "
        "reservation excluded (TFLM's RAM column excludes its stack too). ⁵ measured now "
        "with the tflite-micro Python interpreter by bisection. ⁶ kernels specialised to "
        "the model in its generated code (`<model>_spec_*` functions, ELF symbol sizes, "
        f"--specialize {rows[0].specialize if rows else 'auto'}), included in code ³.",
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", type=Path,
                   help="model files (default: the five ANCHORS.md firmware models)")
    p.add_argument("--models-dir", type=Path, default=shared_models_dir())
    p.add_argument("--all", action="store_true",
                   help="every *.tflite under --models-dir that fits nucleo_f767zi")
    p.add_argument("--stateful", action="store_true",
                   help="the stateful models (TFLM's SVDF keyword benchmark and MNIST "
                   "LSTM, models/)")
    p.add_argument("--no-families", action="store_true",
                   help="default list: the anchor models only, not the family models")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    p.add_argument("--no-tflm", action="store_true", help="skip the TFLM min-arena bisection")
    p.add_argument("--no-m3", action="store_true", help="skip the Cortex-M3 runs")
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
    p.add_argument("--tflm-worker", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tflm_worker:
        return tflm_worker(args.tflm_worker)
    root = args.models_dir.resolve()
    if args.profile:
        opts = None
        if args.inplace_ops or args.tiling:
            opts = PlanOptions(inplace_ops=args.inplace_ops or "off",
                               tiling=args.tiling or "off",
                               max_extra_macs=args.max_extra_macs)
        return profile(args.profile, args.target, opts, args.specialize)
    if args.models:
        paths = [m.resolve() for m in args.models]
    elif args.all:
        paths = sorted(root.rglob("*.tflite"), key=lambda q: (q.parent.name, q.name))
    elif args.stateful:
        paths = [find_model(rel) or root / rel for rel in STATEFUL_FILES]
    else:
        # under --models-dir, else wherever find_model has it (the shipped models/)
        paths = [root / rel if (root / rel).is_file() else find_model(rel) or root / rel
                 for rel in ANCHOR_FILES.values()]
        if not args.no_families:
            paths += family_models(root)
    rows: list[Row] = []
    failed = 0
    for path in paths:
        print(f"bench_firmware: {path.name}", file=sys.stderr, flush=True)
        try:
            base = root if path.is_relative_to(root) else path.parent
            rows.append(measure(path, base, m3=not args.no_m3, tflm=not args.no_tflm,
                                timeout_s=args.tflm_timeout, specialize=args.specialize))
        except BudgetError as err:
            print(f"bench_firmware: {path.name} does not fit {M7_BOARD}: "
                  f"{err.message.splitlines()[0]}", file=sys.stderr)
        except NnoptError as err:
            print(f"bench_firmware: {path.name}: {err}", file=sys.stderr)
            failed += 1
    print("\n".join(markdown(rows)))
    if args.json:
        doc: dict[str, Any] = {"seed": SEED, "m7_board": M7_BOARD, "m3_board": M3_BOARD,
                               "anchors_from": "ANCHORS.md", "anchors": ANCHORS,
                               "rows": [asdict(r) for r in rows]}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
