"""Compile and link C programs for the host or as bare-metal firmware (Cortex-M, RV32),
and run them (:func:`run`: directly on the host, under QEMU otherwise).

:func:`build` turns a :class:`BuildSpec` into an executable: host ``gcc`` (optionally with
ASan/UBSan) or the board's cross compiler (``arm-none-eabi-gcc``, ``riscv64-unknown-elf-gcc``:
:mod:`nnopt.firmware.arch`) with nnrt's bare-metal port and a linker script generated
from the board (:mod:`nnopt.firmware.linker`). Targets: ``host``; ``qemu-m7`` and
``qemu-m3`` (a Cortex-M7 / M3 board, default nucleo_f767zi / mps2_an385); ``qemu``: the
board's own core and QEMU machine, whatever its arch (a board must be given). The nnrt
port for the target is always added; the harness (``modules/nnrt/harness/runner_main.c``)
is not: callers pass it in ``sources`` when they want it.

Builds are cached by content: the key hashes the compiler, every flag, the linker
script and every source byte; each entry also records the headers the compiler read
(``-MMD``) with their hashes, and is used only while all of them are unchanged. A hit
runs no compiler.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from ..boards import Board, load_board
from ..errors import ToolchainError
from ..paths import nnrt_dir, nnrt_include_dirs
from .arch import ARCH_PORT_FILES, ARCH_TOOLS, arch_tools, machine_flags
from .cores import core_name, core_of
from .linker import Addresses, linker_script
from .qemu import QEMU_HINT, instructions_per_tick_ratio, parse_instructions, qemu_command

#: ``qemu``: the QEMU machine of the board (any core of :data:`nnopt.firmware.cores.CORES`);
#: ``qemu-m7`` / ``qemu-m3``: the same, for a board with that core only (aliases kept).
Target = Literal["host", "qemu", "qemu-m7", "qemu-m3"]
TARGETS: tuple[Target, ...] = get_args(Target)

#: Board used for a core-specific QEMU target when the spec names none (the generic
#: ``qemu`` target has none: the board's core picks the machine, so it needs a board).
DEFAULT_BOARDS: Mapping[Target, str] = {"qemu-m7": "nucleo_f767zi", "qemu-m3": "mps2_an385"}
#: CPU a core-specific QEMU target is for (the board's ``cpu`` must match).
TARGET_CPUS: Mapping[Target, str] = {"qemu-m7": "cortex-m7", "qemu-m3": "cortex-m3"}

HOST_CC = "gcc"
ARM_CC = ARCH_TOOLS["arm"].cc
_APT_HINTS = {
    HOST_CC: "install a host C compiler: apt-get install gcc",
    **{t.cc: t.cc_hint for t in ARCH_TOOLS.values()},
}
WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer")
_CACHE_FORMAT = 1  # bump when the layout or the meaning of an entry changes


@dataclass(frozen=True)
class BuildSpec:
    """What to build. Paths may be relative (to the current directory)."""

    target: Target
    sources: tuple[Path, ...]
    include_dirs: tuple[Path, ...] = ()
    defines: Mapping[str, str] = field(default_factory=dict)
    board: Board | None = None  # qemu-m7/m3: default nucleo_f767zi / mps2_an385; qemu: needed
    sanitize: bool = False  # host only: ASan + UBSan, first error aborts
    opt: str = "-O2"
    addresses: Addresses = "emulation"  # qemu-*: "board" links at the real part's map
    stack_size: int | None = None  # None: the board's firmware.stack_size (8192)
    heap_size: int | None = None  # None: the board's firmware.heap_size (0)
    extra_cflags: tuple[str, ...] = ()
    kind: Literal["executable", "library"] = "executable"  # library: a static .a, no port
    libraries: tuple[Path, ...] = ()  # static libraries to link (e.g. from a library build)


def default_cache_dir() -> Path:
    """``$NNOPT_CACHE`` or ``~/.cache/nnopt``."""
    env = os.environ.get("NNOPT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "nnopt"


def resolve_board(target: Target, board: Board | None) -> Board | None:
    """The board a target builds for; checks that it fits the target."""
    if target == "host":
        return board
    if target not in TARGETS:
        raise ToolchainError(f"unknown target {target!r}",
                             hint="targets: " + ", ".join(TARGETS))
    if board is None and target not in DEFAULT_BOARDS:
        raise ToolchainError(f"target {target} needs a board (its core picks the QEMU "
                             "machine)",
                             hint="name one: --board qemu_riscv32, hifive1, mps2_an385, ...")
    b = board if board is not None else load_board(DEFAULT_BOARDS[target])
    core_of(b)  # a core nnopt builds for
    if target in TARGET_CPUS and core_name(b.cpu) != TARGET_CPUS[target]:
        raise ToolchainError(
            f"board {b.name} has a {b.cpu}, target {target} is a {TARGET_CPUS[target]}",
            hint=f"use a {TARGET_CPUS[target]} board with {target}")
    if b.emulation is None:
        raise ToolchainError(f"board {b.name} cannot be emulated (no emulation section)",
                             hint="add `emulation:` to its yaml (see boards/nnopt/README.md)")
    return b


def find_tool(name: str) -> str:
    """Absolute path of a tool on PATH, or ToolchainError with an apt hint."""
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(f"{name} not found on PATH",
                             hint=_APT_HINTS.get(name, f"install {name}"))
    return path


def port_sources(target: Target, board: Board | None = None) -> tuple[Path, ...]:
    """The nnrt port files built into every program for ``target`` (bare metal: the
    shared port files and those of the board's arch, :mod:`nnopt.firmware.arch`)."""
    if target == "host":
        return tuple(sorted((nnrt_dir() / "port" / "host").glob("*.c")))
    port = nnrt_dir() / "port" / "baremetal"
    shared = [p for p in sorted(port.glob("*.c")) if p.name not in ARCH_PORT_FILES]
    own = arch_tools(board).port_files if board is not None else ARCH_TOOLS["arm"].port_files
    return (*shared, *(port / f for f in own))


def instructions_per_tick(machine: str) -> int:
    """SysTick ticks -> instructions on a QEMU machine, rounded down where the
    machine's clock makes it a fraction (see nnopt.firmware.qemu)."""
    return int(instructions_per_tick_ratio(machine))


def target_flags(target: Target, board: Board | None, sanitize: bool) -> list[str]:
    """Code-generation flags (also passed to the link)."""
    if target == "host":
        return list(SANITIZE_FLAGS) if sanitize else []
    if sanitize:
        raise ToolchainError("sanitize=True is for the host target only",
                             hint="build with target='host' to use ASan/UBSan")
    assert board is not None
    return machine_flags(board)


def base_defines(target: Target, board: Board | None) -> dict[str, str]:
    """Defines every program for ``target`` gets (spec.defines may override them)."""
    if target == "host":
        return {"NNRT_PORT_HOST": "1"}
    assert board is not None and board.emulation is not None
    ratio = instructions_per_tick_ratio(board.emulation.machine)
    defs = {
        "NNRT_PORT_BAREMETAL": "1",
        "NNRT_PORT_INSTR_PER_TICK": str(ratio.numerator),
    }
    if ratio.denominator != 1:  # e.g. 32 MHz: 125/4 instructions per tick
        defs["NNRT_PORT_INSTR_PER_TICK_DEN"] = str(ratio.denominator)
    if "dtcm" in board.regions and board.regions["dtcm"].kind == "ram":
        defs["NNRT_HAS_DTCM"] = "1"
    return defs


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tool_id(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


@dataclass
class _Plan:
    target: Target
    board: Board | None
    cc: str
    cflags: list[str]
    ldflags: list[str]
    sources: list[Path]
    script: str | None
    output_name: str


def _plan(spec: BuildSpec) -> _Plan:
    if spec.target not in TARGETS:
        raise ToolchainError(f"unknown target {spec.target!r}",
                             hint="targets: " + ", ".join(TARGETS))
    if not spec.sources:
        raise ToolchainError("nothing to build: no sources given")
    board = resolve_board(spec.target, spec.board)
    machine = target_flags(spec.target, board, spec.sanitize)
    tools = arch_tools(board) if board is not None and spec.target != "host" else None
    cc = find_tool(HOST_CC if tools is None else tools.cc)
    sources = [Path(s).resolve() for s in spec.sources]
    for s in sources:
        if not s.is_file():
            raise ToolchainError(f"source file {s} not found")
    if spec.kind == "executable":
        sources += [p for p in port_sources(spec.target, board) if p not in sources]
    include_dirs = [*nnrt_include_dirs(), *(Path(d).resolve() for d in spec.include_dirs)]
    defines = base_defines(spec.target, board)
    defines.update({str(k): str(v) for k, v in spec.defines.items()})
    cflags = [*WARNINGS, spec.opt, "-g", *machine]
    if spec.target != "host":
        cflags += ["-ffunction-sections", "-fdata-sections"]
    cflags += [f"-I{d}" for d in include_dirs]
    cflags += [f"-D{k}" if v == "" else f"-D{k}={v}" for k, v in sorted(defines.items())]
    cflags += list(spec.extra_cflags)
    script: str | None = None
    libs = [str(Path(lib).resolve()) for lib in spec.libraries]
    if spec.kind == "library":
        ar = find_tool("ar" if tools is None else tools.ar)
        return _Plan(spec.target, board, cc, cflags, [ar], sources, None, "libnnrt.a")
    if spec.target == "host":
        ldflags = [*libs, *machine, "-lm"]
        output = "program"
    else:
        assert board is not None
        script = linker_script(board, addresses=spec.addresses,
                               stack_size=spec.stack_size, heap_size=spec.heap_size)
        ldflags = [*libs, *machine, "-nostartfiles", "-Wl,--gc-sections",
                   "-Wl,--no-warn-rwx-segments", "-lm"]
        output = "firmware.elf"
    return _Plan(spec.target, board, cc, cflags, ldflags, sources, script, output)


def _cache_key(plan: _Plan) -> str:
    doc = {
        "format": _CACHE_FORMAT,
        "target": plan.target,
        "cc": _tool_id(plan.cc),
        "cflags": plan.cflags,
        "ldflags": plan.ldflags,
        "script": plan.script,
        "sources": [[str(s), _sha256(s)] for s in plan.sources],
        "libraries": [_sha256(Path(f)) for f in plan.ldflags if f.endswith(".a")],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _deps_unchanged(manifest: Path) -> bool:
    try:
        deps = json.loads(manifest.read_text())
        return all(Path(p).is_file() and _sha256(Path(p)) == h for p, h in deps.items())
    except (OSError, ValueError, AttributeError):
        return False


def _parse_depfile(text: str) -> list[str]:
    """Prerequisites of a make-style dependency file written by ``gcc -MMD``."""
    text = text.replace("\\\n", " ")
    _, _, prereqs = text.partition(": ")
    out: list[str] = []
    token = ""
    i = 0
    while i < len(prereqs):
        c = prereqs[i]
        if c == "\\" and i + 1 < len(prereqs) and prereqs[i + 1] in " #":
            token += prereqs[i + 1]
            i += 2
            continue
        if c.isspace():
            if token:
                out.append(token)
            token = ""
        else:
            token += c
        i += 1
    if token:
        out.append(token)
    return out


def _run_tool(cmd: Sequence[str], what: str, cwd: Path) -> str:
    try:
        proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True,
                              check=False)
    except OSError as err:
        raise ToolchainError(f"cannot run {cmd[0]}: {err}",
                             hint=_APT_HINTS.get(Path(cmd[0]).name)) from err
    if proc.returncode != 0:
        raise ToolchainError(f"{what} failed:\n{(proc.stderr + proc.stdout).strip()}",
                             hint="command: " + " ".join(cmd))
    return proc.stderr


_OVERFLOW_RE = re.compile(r"region `([^']+)' overflowed by (\d+) bytes")


def _link_error(err: ToolchainError, board: Board | None) -> ToolchainError:
    overflows = _OVERFLOW_RE.findall(err.message)
    if not overflows or board is None:
        return err
    parts = ", ".join(f"region `{r}' overflowed by {int(n):,} bytes" for r, n in overflows)
    return ToolchainError(
        f"firmware does not fit board {board.name}: {parts}\n{err.message}",
        hint="move weights to external flash (--swap), put the arena in DTCM, shrink the "
             "arena with tiling, or lower firmware.stack_size; `nnopt check-elf` on a build "
             "for a bigger board shows what takes the space")


def build(spec: BuildSpec, *, cache_dir: Path | None = None) -> Path:
    """Compile and link ``spec``; return the path of the executable (in the cache).

    Raises :class:`~nnopt.errors.ToolchainError` when a compiler is missing (with an apt
    hint), a source does not compile (with the compiler's message) or the firmware does
    not fit the board (naming the region and by how much).
    """
    plan = _plan(spec)
    root = (cache_dir or default_cache_dir()).resolve() / "build"
    key = _cache_key(plan)
    entry = root / key[:2] / key
    exe = entry / plan.output_name
    manifest = entry / "deps.json"
    if exe.is_file() and manifest.is_file() and _deps_unchanged(manifest):
        return exe

    entry.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tmp-", dir=entry.parent))
    try:
        objects: list[Path] = []
        jobs: list[tuple[list[str], str]] = []
        for i, src in enumerate(plan.sources):
            obj = work / f"{i:03d}_{src.stem}.o"
            objects.append(obj)
            cmd = [plan.cc, *plan.cflags, "-MMD", "-MF", f"{obj}.d", "-c", str(src),
                   "-o", str(obj)]
            jobs.append((cmd, f"compiling {src}"))
        workers = max(1, min(len(jobs), os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_run_tool, cmd, what, work) for cmd, what in jobs]
            for fut in futures:
                fut.result()

        if plan.output_name.endswith(".a"):  # a library: archive, no link
            _run_tool([plan.ldflags[0], "rcs", str(work / plan.output_name),
                       *(str(o) for o in objects)], "archiving " + plan.output_name, work)
            link: list[str] = []
        else:
            link = [plan.cc, *(str(o) for o in objects), "-o", str(work / plan.output_name)]
        if link and plan.script is not None:
            (work / "link.ld").write_text(plan.script)
            link += ["-T", str(work / "link.ld"), f"-Wl,-Map={work / 'firmware.map'}"]
        if link:
            link += plan.ldflags
            try:
                _run_tool(link, "linking " + plan.output_name, work)
            except ToolchainError as err:
                raise _link_error(err, plan.board) from None

        deps: dict[str, str] = {}
        for obj in objects:
            for dep in _parse_depfile(Path(f"{obj}.d").read_text()):
                p = Path(dep) if os.path.isabs(dep) else work / dep
                deps[str(p.resolve())] = _sha256(p)
        for name in ("link.ld", "firmware.map", plan.output_name):
            if (work / name).exists():
                os.replace(work / name, entry / name)
        tmp_manifest = work / "deps.json"
        tmp_manifest.write_text(json.dumps(deps, indent=1, sort_keys=True))
        os.replace(tmp_manifest, manifest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exe


@dataclass(frozen=True)
class RunResult:
    """What a run produced.

    ``instructions``: the last ``nnrt: instructions=<N>`` line the program printed (the
    harness prints one, counted around ``invoke()`` only, on QEMU), else ``None``.
    """

    exit_code: int
    stdout: str
    stderr: str
    instructions: int | None


def run(exe: Path, target: Target, args: Sequence[str], *, board: Board | None = None,
        timeout_s: float = 600, cwd: Path | None = None) -> RunResult:
    """Run a program built by :func:`build` and capture its exit code and output.

    ``target`` is the one it was built for; for ``qemu-*`` the board (default as in
    :func:`build`) selects the QEMU machine (:func:`nnopt.firmware.qemu.qemu_command`).
    The program (or QEMU) runs in the caller's working directory, so relative paths in
    ``args`` mean the same as for the caller; absolute ones are safest. ``cwd`` runs it
    elsewhere (e.g. in a host key store of PSA ITS files; then pass absolute paths). A
    program killed by a signal (e.g. QEMU aborting on a CPU lockup) gets exit code 128 + signal. A
    timeout raises :class:`~nnopt.errors.ToolchainError`.
    """
    exe = Path(exe).resolve()
    if not exe.is_file():
        raise ToolchainError(f"program {exe} not found", hint="build it first")
    if target == "host":
        cmd = [str(exe), *args]
    else:
        b = resolve_board(target, board)
        assert b is not None
        cmd = qemu_command(exe, b, args)
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, check=False, cwd=cwd)
    except subprocess.TimeoutExpired as err:
        raise ToolchainError(
            f"{exe.name} on {target} timed out after {timeout_s:g} s",
            hint="the program may be stuck; raise timeout_s for long runs") from err
    except OSError as err:
        raise ToolchainError(f"cannot run {cmd[0]}: {err}",
                             hint=QEMU_HINT if target != "host" else None) from err
    stdout = proc.stdout.decode(errors="replace")
    stderr = proc.stderr.decode(errors="replace")
    code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    return RunResult(code, stdout, stderr, parse_instructions(stdout))
