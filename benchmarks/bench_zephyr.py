#!/usr/bin/env python3
"""nnopt beside TensorFlow Lite Micro (reference and CMSIS-NN kernels) as Zephyr
applications on the Cortex-M7 QEMU board (mps2/an500/qemu): the same kernel
configuration and the same libc on both sides, instructions per inference counted
exactly under QEMU.

For every model (default: the five anchors, person_detect, vww_96_int8,
kws_ref_model, pretrainedResnet_quant, ad01_int8; any .tflite accepted):

- **nnopt**: ``benchmarks/zephyr/nnopt_app``, the model compiled at build time by
  ``nnopt_add_model()`` (planned for the nnopt board mps2_an500, the ELF checked
  against it after the link);
- **TFLM reference** and **TFLM + CMSIS-NN**: ``benchmarks/zephyr/tflm_app``, TFLM as
  Zephyr's own module builds it (``CONFIG_TENSORFLOW_LITE_MICRO``, with
  ``CONFIG_TENSORFLOW_LITE_MICRO_CMSIS_NN_KERNELS`` for CMSIS-NN); its operator resolver
  and arena come from the model at configure time (``gen_tflm_model.py``). The arena
  is then shrunk to what the target needs: ``arena_used_bytes()`` of a first run, and
  the smallest multiple of 16 above it that allocates (``tflm_firmware.search_arena``),
  each try a reconfiguration, a build and a run; the result is kept in the build
  directory for the next run.

Both share ``benchmarks/zephyr/common`` (bench.conf: -O2, the toolchain's picolibc, a
16 KB main stack, semihosting to end QEMU; bench_io.c: the inputs, the counter, the
console lines). The inputs are the seeded ones of ``bench_firmware.py`` (``oracle.py``,
seed 1; a stateful model runs 4 invocations, the state carried over), compiled into
the image; the outputs come back on the console and are compared byte for byte with
the ``tflite-micro`` Python interpreter's. Each application times ``invoke()`` /
``Invoke()`` with ``k_cycle_get_32()``: the Cortex-M SysTick driver's cycle count, 25
MHz on mps2. Under ``qemu-system-arm -icount shift=0`` every instruction takes 1 ns of
virtual time, so one cycle is 40 instructions: the counts have a resolution of 40
instructions (the same as ``bench_firmware.py``'s bare-metal SysTick counter) and
include the interrupts that fire during the inference (a tickless kernel with nothing
scheduled: none, or one SysTick wrap per 16.7 M cycles).

ROM and RAM of each ``zephyr.elf``: :func:`nnopt.elfcheck.check_elf` against the nnopt
board mps2_an500 (ROM = text + rodata + the data load image; RAM = data + bss + noinit,
the kernel's stacks included: the same 16 KB main stack and 2 KB interrupt stack on
every side).

Builds are slow (TFLM is about 300 C++ files): every model and side has its own build
directory under ``--build-root`` (default ``~/.cache/nnopt/zephyr-bench/``), reused by
the next run (ninja rebuilds what changed, e.g. nnopt's kernels); ccache, which Zephyr
uses when installed, shares the compiled objects across models (this script sets
``CCACHE_BASEDIR`` to the build root and ``CCACHE_NOHASHDIR``, so identical sources
under different build directories hit). Everything runs under ``nice``.

The workspace, the tools and the build setup: ``zephyr_setup.py``; the rows, their
summary lines, the Markdown table and the JSON document: ``zephyr_report.py``; this
script configures, builds and runs each side of each model.

    python benchmarks/bench_zephyr.py [MODEL ...] [--json PATH] [--tflm-variants ref,cmsis_nn]
                                      [--no-tflm] [--no-nnopt] [--build-root DIR] [--jobs N]
                                      [--timeout S]

Needs a Zephyr 4.1 workspace with the tflite-micro and cmsis-nn modules
(``ZEPHYR_BASE`` + ``ZEPHYR_MODULES``, or ``NNOPT_ZEPHYR_WORKSPACE``, or
``--zephyr-base``), the GNU Arm toolchain with picolibc and its libstdc++ (Debian:
gcc-arm-none-eabi picolibc-arm-none-eabi libstdc++-arm-none-eabi-picolibc), cmake,
ninja and qemu-system-arm; without them it says what is missing and exits 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tflm_firmware
from common import ratio
from oracle import Oracle, compare_outputs, oracle_outputs, seeded_inputs
from zephyr_report import (
    LABELS,
    SIDES,
    Row,
    Side,
    markdown,
    rows_error,
    summary,
    write_json,
)
from zephyr_setup import NNOPT_BOARD, QEMU_MACHINE, ZEPHYR_BOARD, Setup, SetupError, find_setup

from nnopt.boards import load_board
from nnopt.elfcheck import check_elf
from nnopt.errors import NnoptError
from nnopt.firmware.qemu import INSTRUCTIONS_PER_TICK
from nnopt.firmware.toolchain import run
from nnopt.frontend.tflite import model_name
from nnopt.paths import find_model, shared_models_dir

APPS = Path(__file__).resolve().parent / "zephyr"
#: How tflm_app compiles TFLM (its CMakeLists.txt, BENCH_TFLM_BUILD).
TFLM_BUILDS = ("release", "zephyr")
DEFAULT_MODELS = ("tflm/person_detect.tflite", "mlperf_tiny/vww_96_int8.tflite",
                  "mlperf_tiny/kws_ref_model.tflite",
                  "mlperf_tiny/pretrainedResnet_quant.tflite",
                  "mlperf_tiny/ad01_int8.tflite")
#: What each application prints (benchmarks/zephyr/common/bench_io.h).
_VALUE_RE = re.compile(r"^bench: (\w+)=(\d+)\s*$", re.MULTILINE)
_OUT_RE = re.compile(r"^bench: out (\d+) (\d+) (\d+) ([0-9a-f]*)\s*$", re.MULTILINE)
_FAILED_RE = re.compile(r"^bench: failed (.*?)\s*$", re.MULTILINE)


class BenchError(Exception):
    """One side of one model cannot be measured; the message says why (one line)."""


# ----- one side: configure, build, run -----

@dataclass(frozen=True)
class AppRun:
    """What an application printed."""

    exit_code: int
    values: dict[str, int]
    outputs: dict[tuple[int, int], bytes]  # (output, invocation) -> bytes
    failed: str | None
    log: str


def parse_console(text: str, exit_code: int) -> AppRun:
    """The ``bench:`` lines of an application's console (bench_io.h)."""
    values = {k: int(v) for k, v in _VALUE_RE.findall(text)}
    chunks: dict[tuple[int, int], dict[int, bytes]] = {}
    for o, k, off, hexa in _OUT_RE.findall(text):
        chunks.setdefault((int(o), int(k)), {})[int(off)] = bytes.fromhex(hexa)
    outputs = {key: b"".join(parts[off] for off in sorted(parts))
               for key, parts in chunks.items()}
    failed = _FAILED_RE.findall(text)
    return AppRun(exit_code, values, outputs, failed[-1] if failed else None, text)


def instructions(cycles: int, hz: int) -> int:
    """Instructions of ``cycles`` of the system timer at ``hz`` under ``-icount shift=0``
    (1 ns per instruction): 40 per cycle at mps2's 25 MHz."""
    per = INSTRUCTIONS_PER_TICK[QEMU_MACHINE]
    if hz * per != 1_000_000_000:
        raise BenchError(f"the cycle counter runs at {hz:,} Hz, not the {10**9 // per:,} Hz "
                         f"of QEMU's {QEMU_MACHINE} (1 ns per instruction, {per} per cycle)")
    return cycles * per


def gather_outputs(outputs: dict[tuple[int, int], bytes], n_out: int, k: int) -> list[bytes]:
    """Each output's invocations back to back (the oracle's layout)."""
    return [b"".join(outputs.get((o, j), b"") for j in range(k)) for o in range(n_out)]


def failure_line(log: str) -> str:
    """The line of a cmake / ninja log that says what went wrong (with the next one when
    it ends in a colon: CMake's message follows its location)."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for pat in (r"bench: ", r"\berror\b", r"Error", r"overflowed", r"FAILED"):
        i = next((i for i, ln in enumerate(lines) if re.search(pat, ln)), None)
        if i is not None:
            hit = lines[i]
            if hit.endswith(":") and i + 1 < len(lines):
                hit += " " + lines[i + 1]
            return hit[:300]
    return (lines[-1] if lines else "no output")[:300]


def configured_source(build_dir: Path) -> Path | None:
    """The source directory CMake configured ``build_dir`` from (its CMakeCache.txt's
    CMAKE_HOME_DIRECTORY), or None when it has no cache."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.split("=", 1)[1].strip()).resolve()
    return None


class App:
    """One application's build directory for one model and side."""

    def __init__(self, setup: Setup, app: str, build_dir: Path, defines: dict[str, str],
                 log: Callable[[str], None]):
        self.setup = setup
        self.source = APPS / app
        self.dir = build_dir
        self.defines = defines
        self.log = log

    def cmake_args(self, extra: dict[str, str]) -> list[str]:
        defs = {"BOARD": ZEPHYR_BOARD,
                "ZEPHYR_MODULES": ";".join(os.fspath(m) for m in self.setup.modules),
                "TOOLCHAIN_HAS_PICOLIBC": "ON",
                "Python3_EXECUTABLE": sys.executable, **self.setup.defines(), **self.defines,
                **extra}
        return [f"-D{k}={v}" for k, v in sorted(defs.items())]

    def build(self, extra: dict[str, str] | None = None) -> Path:
        """Configure (when the arguments changed) and build; the ELF, or BenchError."""
        args = self.cmake_args(extra or {})
        stamp = self.dir / "bench-configure.json"
        self.dir.mkdir(parents=True, exist_ok=True)
        log = self.dir / "bench-build.log"
        other = configured_source(self.dir)
        if other is not None and other != self.source.resolve():
            # made from another checkout (CMake refuses a second source directory): its
            # cache goes, the objects stay for ninja to reuse or replace
            self.log(f"{self.dir} was configured from {other}: configuring it afresh")
            (self.dir / "CMakeCache.txt").unlink()
            shutil.rmtree(self.dir / "CMakeFiles", ignore_errors=True)
            stamp.unlink(missing_ok=True)
        configured = ((self.dir / "build.ninja").is_file() and stamp.is_file()
                      and json.loads(stamp.read_text()) == args)
        with log.open("w") as f:
            if not configured:
                self.log(f"configuring {self.dir}")
                stamp.unlink(missing_ok=True)
                proc = subprocess.run(["nice", "cmake", "-GNinja", "-S", os.fspath(self.source),
                                       "-B", os.fspath(self.dir), *args], stdout=f,
                                      stderr=subprocess.STDOUT, env=self.setup.env, check=False)
                if proc.returncode != 0:
                    raise BenchError(f"configuration failed: {failure_line(log.read_text())} "
                                     f"(log {log})")
                stamp.write_text(json.dumps(args))
            self.log(f"building (ninja -j{self.setup.jobs}, log {log})")
            proc = subprocess.run(["nice", "ninja", "-C", os.fspath(self.dir),
                                   f"-j{self.setup.jobs}"], stdout=f, stderr=subprocess.STDOUT,
                                  env=self.setup.env, check=False)
        if proc.returncode != 0:
            raise BenchError(f"build failed: {failure_line(log.read_text())} (log {log})")
        elf = self.dir / "zephyr" / "zephyr.elf"
        if not elf.is_file():
            raise BenchError(f"the build made no {elf} (log {log})")
        return elf

    def run(self, elf: Path, timeout_s: float) -> AppRun:
        """The application under QEMU (``-icount shift=0``, semihosting to exit)."""
        self.log("running under QEMU")
        try:
            res = run(elf, "qemu-m7", [], board=load_board(NNOPT_BOARD), timeout_s=timeout_s)
        except NnoptError as err:
            raise BenchError(f"QEMU: {err.message}") from err
        return parse_console(res.stdout + res.stderr, res.exit_code)


def _fill(side: Side, elf: Path, out: AppRun) -> None:
    """Counts and the ELF's ROM / RAM of a run that finished."""
    v = out.values
    if out.exit_code != 0 or "cycles" not in v or "hz" not in v:
        why = out.failed or (out.log.strip().splitlines() or ["no output"])[-1][:200]
        raise BenchError(f"the application failed (QEMU exit {out.exit_code}): {why}")
    side.cycles = v["cycles"]
    side.instructions = instructions(v["cycles"], v["hz"])
    side.instructions_total = instructions(v.get("cycles_total", v["cycles"]), v["hz"])
    side.stack_bytes = v.get("stack")
    report = check_elf(elf, load_board(NNOPT_BOARD))
    side.rom_bytes = report.rom_used
    side.ram_bytes = report.ram_used


def _compare(side: Side, out: AppRun, expected: Oracle | None, k: int) -> None:
    if expected is None:
        return
    got = gather_outputs(out.outputs, len(expected.outputs), k)
    diff = compare_outputs(got, expected)
    side.bit_exact = diff is None
    if diff is not None:
        side.error = f"output differs from the interpreter's: {diff}"


def measure_nnopt(setup: Setup, model: Path, model_dir: Path, defines: dict[str, str],
                  expected: Oracle | None, k: int, timeout_s: float,
                  log: Callable[[str], None]) -> Side:
    bdir = setup.side_dir(model_dir, "nnopt")
    side = Side(build_dir=os.fspath(bdir))
    app = App(setup, "nnopt_app", bdir,
              {**defines, "BENCH_NNOPT_OPTIONS": ";".join(setup.nnopt_options)}, log)
    t0 = time.monotonic()
    elf = app.build()
    side.build_seconds = time.monotonic() - t0
    t0 = time.monotonic()
    out = app.run(elf, timeout_s)
    side.run_seconds = time.monotonic() - t0
    _fill(side, elf, out)
    name = model_name(model)
    plan = app.dir / "nnopt" / name / f"{name}_plan.json"
    if plan.is_file():
        side.arena_bytes = int(json.loads(plan.read_text())["arena_bytes"])
    _compare(side, out, expected, k)
    return side


def _generated_arena(build_dir: Path) -> int | None:
    """The arena gen_tflm_model.py wrote into the build's tflm_model.h."""
    header = build_dir / "tflm_model" / "tflm_model.h"
    if not header.is_file():
        return None
    m = re.search(r"#define BENCH_TFLM_ARENA_BYTES (\d+)", header.read_text())
    return int(m.group(1)) if m else None


def allocated(out: AppRun) -> bool:
    """Whether TFLM allocated its tensors in the run (any later failure aside): it
    printed ``arena_used_bytes()``. A run that stopped before did not, whether it said
    "failed AllocateTensors" or faulted: TFLM's release build (NDEBUG) goes on with a
    null buffer after some failed allocations, and Zephyr's MPU stops the write
    (fatal error 19, K_ERR_ARM_MEM_DATA_ACCESS)."""
    return "arena_used" in out.values


def measure_tflm(setup: Setup, variant: str, model_dir: Path, defines: dict[str, str],
                 expected: Oracle | None, k: int, timeout_s: float,
                 log: Callable[[str], None]) -> Side:
    """TFLM ``variant``: with the arena of the last run (``bench-arena.json``), else with
    the configure-time default, then the smallest that allocates
    (:func:`tflm_firmware.search_arena` from ``arena_used_bytes()``)."""
    bdir = setup.side_dir(model_dir, variant)
    side = Side(build_dir=os.fspath(bdir))
    app = App(setup, "tflm_app", bdir, {**defines, "BENCH_TFLM_KERNELS": variant,
                                        "BENCH_TFLM_BUILD": setup.tflm_build}, log)
    state = bdir / "bench-arena.json"
    last: dict[str, Any] = {}

    def attempt(arena: int | None) -> AppRun:
        """Build with ``arena`` (None: the configure-time default) and run."""
        t0 = time.monotonic()
        elf = app.build({"TFLM_ARENA_BYTES": "" if arena is None else str(arena)})
        t1 = time.monotonic()
        out = app.run(elf, timeout_s)
        side.build_seconds += t1 - t0
        side.run_seconds += time.monotonic() - t1
        linked = _generated_arena(bdir)
        if linked is None:
            raise BenchError(f"no arena size in {bdir}/tflm_model/tflm_model.h")
        last.update(elf=elf, out=out, arena=linked)
        return out

    # the kept arena holds for the configuration it was found with (not for another
    # model, input, module list or TFLM build)
    key = hashlib.sha256(json.dumps(app.cmake_args({})).encode()).hexdigest()[:16]
    saved = json.loads(state.read_text()) if state.is_file() else {}
    kept = saved.get("arena") if saved.get("key") == key else None
    out = attempt(kept)
    if kept is not None and not allocated(out):
        log(f"the kept arena {kept:,} B no longer allocates: from the default again")
        kept = None
        out = attempt(None)
    if not allocated(out):
        raise BenchError(f"TFLM cannot allocate the model's tensors in a {last['arena']:,} B "
                         "arena (the tflite-micro interpreter's minimum on the host); hint: "
                         "configure benchmarks/zephyr/tflm_app with a larger "
                         "-DTFLM_ARENA_BYTES")
    if kept is None and "arena_used" in out.values:
        default = int(last["arena"])
        used = out.values["arena_used"]

        def fits(n: int) -> bool:
            if n == default:
                return True
            log(f"trying a {n:,} B arena (arena_used_bytes() {used:,} B)")
            return allocated(attempt(n))

        best = tflm_firmware.search_arena(fits, used, default)
        if last["arena"] != best:
            attempt(best)
        state.write_text(json.dumps({"arena": best, "key": key}) + "\n")
    elf, out = last["elf"], last["out"]
    side.arena_bytes = int(last["arena"])
    side.arena_used_bytes = out.values.get("arena_used")
    _fill(side, elf, out)
    _compare(side, out, expected, k)
    return side


# ----- one model -----

def write_if_changed(path: Path, data: bytes) -> None:
    """Keep the file (and its time stamp: ninja rebuilds what depends on it) when the
    bytes are the same."""
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


def measure(setup: Setup, path: Path, sides: Sequence[str], timeout_s: float,
            log: Callable[[str], None]) -> Row:
    """Every side of one model; what cannot be measured is in the side's ``error``."""
    data = path.read_bytes()
    name = model_name(path)
    row = Row(model=path.stem, path=os.fspath(path))
    inputs = seeded_inputs(data, name)
    row.invocations = inputs.invocations
    expected, why = oracle_outputs(data, inputs.steps, None)
    model_dir = setup.build_root / f"{name}-{hashlib.sha256(data).hexdigest()[:12]}"
    model_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for i, blob in enumerate(inputs.blobs):
        f = model_dir / f"in{i}.bin"
        write_if_changed(f, blob)
        files.append(os.fspath(f))
    defines = {"BENCH_MODEL": os.fspath(path.resolve()), "BENCH_INPUTS": ";".join(files),
               "BENCH_INVOCATIONS": str(inputs.invocations)}
    for s in sides:
        def say(msg: str, s: str = s) -> None:
            log(f"{row.model} {LABELS[s]}: {msg}")

        try:
            if not files:
                raise BenchError("the model has no inputs nnopt or the flatbuffer can read")
            if s == "nnopt":
                side = measure_nnopt(setup, path, model_dir, defines, expected,
                                     inputs.invocations, timeout_s, say)
            else:
                side = measure_tflm(setup, s, model_dir, defines, expected,
                                    inputs.invocations, timeout_s, say)
        except BenchError as err:
            side = Side(error=str(err))
        if why is not None and side.error is None:
            side.error = f"no oracle: {why}"
        say(summary(side))
        row.sides[s] = side
    nn = row.sides.get("nnopt")
    for v in ("cmsis_nn", "ref"):
        other = row.sides.get(v)
        setattr(row, f"ratio_{v}", ratio(nn.instructions if nn else None,
                                          other.instructions if other else None))
    return row


def default_models() -> list[Path]:
    """The anchors: in the shared models (``NNOPT_MODELS``, ``../shared/models``), else
    shipped in ``models/`` (:func:`nnopt.paths.find_model`)."""
    return [find_model(rel) or shared_models_dir() / rel for rel in DEFAULT_MODELS]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", type=Path,
                   help="the .tflite files (default: the five anchors of the shared models)")
    p.add_argument("--json", metavar="PATH", type=Path,
                   help="also write the rows as JSON (rewritten after every model)")
    p.add_argument("--tflm-variants", default="cmsis_nn,ref",
                   help="TFLM kernel variants to measure (default: %(default)s)")
    p.add_argument("--tflm-build", choices=TFLM_BUILDS, default="release",
                   help="'release' (default): TFLM's release defines (NDEBUG, "
                   "TF_LITE_STRIP_ERROR_STRINGS, as TFLM's Makefile with BUILD_TYPE=release "
                   "and bench_firmware.py build it) added to Zephyr's tflite-micro and "
                   "cmsis-nn libraries; 'zephyr': the module as Zephyr compiles it (its "
                   "DCHECKs on)")
    p.add_argument("--nnopt-options", default="", metavar="ARGS",
                   help="more `nnopt optimize` arguments for nnopt_add_model(), e.g. "
                   "\"--inplace-ops off --tiling off\" (bench_firmware.py's plan; default: "
                   "none, the plan nnopt_add_model() makes)")
    p.add_argument("--picolibc-buildtype", default="", metavar="TYPE",
                   help="link this build of the toolchain's picolibc on every side "
                   "(--picolibc-buildtype of picolibc.specs, e.g. 'release', whose memcpy "
                   "and memset copy words; default: the one Zephyr links, which copies "
                   "bytes)")
    p.add_argument("--no-tflm", action="store_true", help="nnopt alone")
    p.add_argument("--no-nnopt", action="store_true", help="TFLM alone")
    p.add_argument("--zephyr-base", type=Path,
                   help="the Zephyr tree (default: $ZEPHYR_BASE, else "
                   "$NNOPT_ZEPHYR_WORKSPACE/zephyr); its modules: $ZEPHYR_MODULES, else "
                   "every module of its workspace")
    p.add_argument("--build-root", type=Path,
                   help="build directories, one per model and side, kept for the next run "
                   "(default: ~/.cache/nnopt/zephyr-bench)")
    p.add_argument("--jobs", type=int, default=2, help="ninja -j (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=1200.0,
                   help="seconds per QEMU run (default: %(default)s)")
    args = p.parse_args(argv)
    variants = [v.strip() for v in args.tflm_variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in tflm_firmware.VARIANTS]
    if unknown:
        print(f"bench_zephyr: unknown TFLM variant(s) {', '.join(unknown)}; variants: "
              f"{', '.join(tflm_firmware.VARIANTS)}", file=sys.stderr)
        return 2
    sides = [s for s in SIDES if (s == "nnopt" and not args.no_nnopt)
             or (s != "nnopt" and not args.no_tflm and s in variants)]
    if not sides:
        print("bench_zephyr: nothing to measure (--no-nnopt with --no-tflm)", file=sys.stderr)
        return 2
    models = args.models or default_models()
    missing = [m for m in models if not m.is_file()]
    if missing:
        print("bench_zephyr: model file(s) not found: " + ", ".join(map(os.fspath, missing))
              + "; hint: the shared models are under ../shared/models/<group>/ (e.g. "
              "mlperf_tiny/kws_ref_model.tflite)", file=sys.stderr)
        return 2
    not_tflite = [m for m in models if m.read_bytes()[4:8] != b"TFL3"]
    if not_tflite:
        print("bench_zephyr: not a .tflite model (no TFL3 file identifier): "
              + ", ".join(map(os.fspath, not_tflite)) + "; hint: pass TFLite flatbuffers "
              "(ONNX models: convert them with `nnopt convert` first)", file=sys.stderr)
        return 2
    try:
        setup = find_setup(args)
    except SetupError as err:
        print(f"bench_zephyr: {err}", file=sys.stderr)
        return 2
    if os.nice(0) < 10:
        os.nice(10 - os.nice(0))
    start = time.monotonic()

    def log(msg: str) -> None:
        print(f"bench_zephyr [{time.monotonic() - start:6.0f} s] {msg}", file=sys.stderr,
              flush=True)

    log(f"Zephyr {setup.version} at {setup.zephyr_base}, board {ZEPHYR_BOARD}, build root "
        f"{setup.build_root}")
    rows: list[Row] = []
    for i, m in enumerate(models, 1):
        log(f"[{i}/{len(models)}] {m}")
        try:
            rows.append(measure(setup, m.resolve(), sides, args.timeout, log))
        except Exception as err:  # a bug or a model nothing reads: its row, not the run
            why = f"{type(err).__name__}: {str(err)[:200]}"
            log(f"{m.name}: {why}")
            rows.append(Row(model=m.stem, path=os.fspath(m),
                            sides={s: Side(error=why) for s in sides}))
        if args.json:
            write_json(rows, setup, args.json)
    print("\n".join(markdown(rows, sides, setup)))
    failed = [(r.model, s) for r in rows for s, side in r.sides.items()
              if side.instructions is None]
    for model, s in failed:
        print(f"bench_zephyr: {model} {LABELS[s]}: {rows_error(rows, model, s)}",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
