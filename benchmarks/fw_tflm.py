"""TFLM's side of bench_firmware.py: where its libraries come from (:class:`TflmContext`),
and one model's TFLM firmware measured (or read from the cache of :mod:`tflm_cache`)
with the same inputs, counting and oracle as nnopt's."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tflm_cache
import tflm_firmware
from fw_nnopt import _first_line
from fw_rows import ROW_CORES, CoreFigures, Row
from oracle import Oracle, compare_outputs
from tflm_firmware import search_arena

from nnopt.boards import Board, load_board
from nnopt.elfcheck import check_elf
from nnopt.errors import NnoptError
from nnopt.firmware.linker import firmware_arena_budget
from nnopt.firmware.toolchain import default_cache_dir
from nnopt.frontend.tflite import load_model_bytes


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
        built for (its name, sources, harness, tools), computed once per core."""
        spec = tflm_firmware.variant_spec(variant)
        if spec.core not in self._identity:
            assert self.sources is not None
            s = self.sources
            self._identity[spec.core] = {
                "core": spec.core,
                "sources": tflm_cache.source_identity(s.tflm, s.cmsis_nn, s.cmsis),
                "harness": tflm_cache.harness_identity(spec.board, spec.target),
                "tools": tflm_cache.tool_identity(tflm_cache.ISA_TOOLS[spec.isa])}
        return self._identity[spec.core]

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
    cores = {"m7", *(c.strip() for c in getattr(args, "cores", "m7,m3").split(",")
                     if c.strip())}
    if args.no_m3:
        cores.discard("m3")
    variants = tuple(v for v in tflm_firmware.ALL_VARIANTS if v in asked
                     and tflm_firmware.variant_spec(v).core in cores)
    return TflmContext(src, None, cache, jobs=args.jobs, ops=ops, variants=variants,
                       results=tflm_cache.ResultCache(cache / "results", args.tflm_cache))


#: Probe arena of a TFLM firmware when the interpreter's (64-bit) minimum is unknown:
#: what nucleo_f767zi's SRAM holds beside the stack and the harness (less on a board
#: with less SRAM: :func:`probe_arena`).
PROBE_ARENA = 360 * 1024


def destination(row: Row, variant: str) -> tuple[Row | CoreFigures, str]:
    """Where ``variant``'s figures go: the row's own ``tflm_<variant>_*`` fields (the M7
    and M3 builds), or ``row.cores[core].tflm_<kernels>_*`` (the other cores)."""
    spec = tflm_firmware.variant_spec(variant)
    if spec.core in ROW_CORES:
        return row, f"tflm_{variant}_"
    figs = row.cores.setdefault(spec.core, CoreFigures(board=spec.board))
    return figs, f"tflm_{spec.kernels}_"


def measure_tflm(row: Row, fw: TflmContext, variant: str, model: Path, inputs: list[bytes],
                 expected: Oracle, k: int, work: Path) -> None:
    """TFLM (``variant``) figures of one model: from the cache when an earlier run
    measured them with the same key (:mod:`tflm_cache`: the core included), else
    measured (:func:`measure_tflm_firmware`) and stored, failures the firmware itself
    reports included (not those of the library build or of QEMU). They go to
    :func:`destination`."""
    dest, p = destination(row, variant)
    key: tuple[str, dict[str, Any]] | None = None
    if fw.results is not None and fw.results.mode != "off":
        key = tflm_cache.measurement_key(
            variant=variant, make_args=tflm_firmware.make_args(variant),
            model=model.read_bytes(), inputs=inputs, invocations=k,
            expected=expected.outputs, **fw.identity(variant))
        hit = fw.results.get(key[0])
        if hit is not None:
            for name in tflm_cache.MEASURED_FIELDS:
                setattr(dest, p + name, getattr(hit, name))
            setattr(dest, p + "measured_at", hit.measured_at)
            setattr(dest, p + "cached", True)
            return
    board = load_board(tflm_firmware.variant_spec(variant).board)
    too_big = does_not_fit(model.read_bytes(), board)
    if too_big is not None:  # no library build, no QEMU: it cannot fit
        setattr(dest, p + "error", too_big)
        return
    try:
        lib = fw.library(variant)
    except tflm_firmware.TflmUnavailable as err:
        setattr(dest, p + "error", str(err)[:300])
        return
    keep = measure_tflm_firmware(dest, lib, model, inputs, expected, k, work, p,
                                 row.tflm_min_arena)
    setattr(dest, p + "measured_at", tflm_cache.now_utc())
    if keep and key is not None and fw.results is not None:
        fw.results.put(key[0], key[1], tflm_cache.Measurement(
            **{name: getattr(dest, p + name) for name in tflm_cache.MEASURED_FIELDS},
            measured_at=getattr(dest, p + "measured_at")))


#: Operators whose output TFLM never places over an input: each needs its non-constant
#: inputs and its output in the arena at once.
_NO_ALIAS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
             "MAX_POOL_2D", "TRANSPOSE_CONV")


def does_not_fit(model: bytes, board: Board) -> str | None:
    """Why TFLM's firmware of ``model`` cannot fit ``board``, from what no build can go
    below (None: it may fit; the link and the arena search decide): TFLM keeps the whole
    .tflite in flash, and its arena holds at least the inputs and output of every
    operator of :data:`_NO_ALIAS` at once, beside the stack."""
    flash = sum(r.size for r in board.regions.values() if r.kind == "rom")
    if len(model) > flash:
        return (f"does not fit {board.name}: the .tflite alone ({len(model):,} B) is "
                f"larger than its flash ({flash:,} B)")
    try:
        g = load_model_bytes(model, unsupported="plan")
    except NnoptError:
        return None
    bound = max((sum(g.tensors[t].nbytes for t in (*op.inputs, *op.outputs)
                     if t >= 0 and not g.tensors[t].is_constant)
                 for op in g.ops if op.opcode in _NO_ALIAS), default=0)
    room = firmware_arena_budget(board)
    if bound > room:
        return (f"does not fit {board.name}: TFLM's arena needs at least {bound:,} B (the "
                f"inputs and output of one operator), its SRAM leaves {room:,} B")
    return None


def probe_arena(board: Board, min_arena: int | None) -> tuple[int, bool]:
    """The probe build's arena: the interpreter's (64-bit) minimum, else
    :data:`PROBE_ARENA`, at most what the board's SRAM leaves beside the stack; and
    whether it was capped to that."""
    want = min_arena or PROBE_ARENA
    cap = firmware_arena_budget(board)
    return (want, False) if want <= cap else (cap // 16 * 16, True)


def measure_tflm_firmware(row: Row | CoreFigures, lib: tflm_firmware.Library, model: Path,
                          inputs: list[bytes], expected: Oracle, k: int, work: Path,
                          prefix: str | None = None, min_arena: int | None = None) -> bool:
    """TFLM firmware of one model with ``lib``: a probe build reads the arena TFLM
    needs on the 32-bit target, the measured build has exactly that arena. The figures
    go to ``row``'s ``prefix`` fields (default ``tflm_<variant>_``). Returns whether
    the outcome belongs to the model (False: QEMU failed to run it)."""
    p = prefix or f"tflm_{lib.variant}_"
    board = load_board(tflm_firmware.variant_spec(lib.variant).board)
    try:
        work.mkdir(parents=True, exist_ok=True)
        harness = tflm_firmware.build_harness(lib, model, work)
        probe_size, capped = probe_arena(
            board, min_arena if min_arena is not None else getattr(row, "tflm_min_arena",
                                                                   None))
        exe = tflm_firmware.link_firmware(harness, probe_size, board)
        probe = tflm_firmware.run_firmware(exe, board, [], [], 1, target=lib.target)
        if probe.exit_code == tflm_firmware.EXIT_ALLOCATE and capped:
            raise tflm_firmware.TflmUnavailable(
                f"does not fit {board.name}: TFLM's arena needs more than the "
                f"{probe_size:,} B its SRAM leaves beside the stack")
        if probe.exit_code != 0 or probe.arena_used is None:
            raise tflm_firmware.TflmUnavailable(_tflm_failure(probe))
        arena = smallest_arena(harness, board, probe.arena_used, probe_size)
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
