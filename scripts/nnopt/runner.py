"""Build a planned model with the harness and run it: on the host or under QEMU.

``run_planned`` generates the C sources (:func:`nnopt.driver.generate`), compiles
them with the nnrt kernels, the platform port and the generic harness (cached by
content), runs the executable, and returns the output tensors (and, with ``trace``,
every tensor each op produced).

Plans that stream weights (``Plan.swap``, see ``nnopt.swap``) also get their sealed
blob, a runtime built with mbedTLS, and run with ``-b <blob>``; a blob the runtime
refuses (NNRT_ERR_AUTH / FORMAT / IO) is a :class:`~nnopt.errors.BlobError`.

:class:`RuntimeExtras` adds compile definitions and include directories to the runtime
library's build and static libraries linked after it: e.g. nnrt's optional CMSIS-NN
path (``NNRT_USE_CMSIS_NN=1``, CMSIS-NN's ``Include`` and a CMSIS-NN library built for
the target), the way Zephyr's ``CONFIG_NNRT_CMSIS_NN`` builds it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .boards import Board
from .codegen.c_model import GeneratedSources
from .driver import generate
from .errors import NnoptError, ToolchainError
from .firmware.toolchain import TARGETS as TOOLCHAIN_TARGETS
from .firmware.toolchain import BuildSpec, Target, build, default_cache_dir, run
from .paths import nnrt_dir
from .planner import PlannedModel
from .swap.mbedtls_build import library_defines, mbedtls_library, mbedtls_sources
from .swap.pipeline import blob_error, build_defines, swap_of
from .swap.provision import check_key_store

TARGETS: tuple[str, ...] = TOOLCHAIN_TARGETS


@dataclass(frozen=True)
class RunOutput:
    outputs: list[bytes]
    trace: dict[int, bytes] = field(default_factory=dict)
    instructions: int | None = None
    executable: Path | None = None
    # allocator="dynamic" with trace: high_water, capacity, bytes_moved, compactions
    allocator_stats: dict[str, int] | None = None
    invocations: int = 1  # inferences run in sequence (the state carried over)
    stack_bytes: int | None = None  # firmware: deepest stack use (painted stack), bytes

#: Tensor index of the dynamic allocator's statistics record in a trace
#: (NNRT_DYN_TRACE_STATS in nnrt/alloc.h).
DYN_TRACE_STATS = 0xFFFFFFFF


@dataclass(frozen=True)
class RuntimeExtras:
    """Extra inputs of the runtime build (default: none).

    ``defines`` and ``include_dirs`` apply to the runtime library's sources (kernels,
    core) and to the program's; ``libraries`` (static archives built for the same
    target) are linked after the runtime, which may call into them."""

    defines: Mapping[str, str] = field(default_factory=dict)
    include_dirs: tuple[Path, ...] = ()
    libraries: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        for lib in self.libraries:
            if not Path(lib).is_file():
                raise NnoptError(f"runtime library {lib} not found",
                                 hint="RuntimeExtras.libraries takes static libraries "
                                 "(.a) built for the target")
        for d in self.include_dirs:
            if not Path(d).is_dir():
                raise NnoptError(f"runtime include directory {d} not found")


NO_EXTRAS = RuntimeExtras()


def _stack_used(stdout: str) -> int | None:
    """The harness's ``nnrt: stack_used=N`` line (bare-metal ports paint the stack)."""
    found = re.findall(r"^nnrt: stack_used=(\d+)\s*$", stdout, re.MULTILINE)
    return int(found[-1]) if found else None


def runtime_sources() -> list[Path]:
    """Every C file of the portable runtime (kernels and core), without ports."""
    root = nnrt_dir()
    files = sorted((root / "kernels").rglob("*.c")) + sorted((root / "src").rglob("*.c"))
    return files


def build_runtime(target: Target, *, board: Board | None = None,
                  sanitize: bool = False, extras: RuntimeExtras = NO_EXTRAS) -> Path:
    """The portable runtime (kernels, core) as a static library, cached by content:
    built once per target and flags, whatever the model. ``extras.defines`` and
    ``extras.include_dirs`` are added to its build (``extras.libraries`` are for the
    link: :func:`build_planned`)."""
    return build(BuildSpec(target=target, sources=tuple(runtime_sources()), board=board,
                           sanitize=sanitize, kind="library",
                           include_dirs=extras.include_dirs, defines=dict(extras.defines)))


def build_planned(planned: PlannedModel, target: Target, out_dir: Path, *,
                  board: Board | None = None, trace: bool = False,
                  sanitize: bool = False, allocator: str = "static",
                  swap_key: bytes | None = None, swap_key_id: int | None = None,
                  extras: RuntimeExtras = NO_EXTRAS) -> Path:
    """Generate and compile the model with the harness; returns the executable.

    The sources are generated in ``out_dir`` and built from a content-addressed copy
    in the cache, so the same model and plan never compile twice. A plan that streams
    weights needs ``swap_key``; its blob is written to ``out_dir`` too. With
    ``swap_key_id`` the code opens the blob by that PSA key id instead of compiling
    the key in."""
    generated = generate(planned, out_dir, allocator=allocator, key=swap_key,
                               key_id=swap_key_id)
    gen = generated.sources
    digest = hashlib.sha256(gen.c_file.read_bytes() + gen.h_file.read_bytes()).hexdigest()
    stable = default_cache_dir() / "gen" / digest[:24]
    if not (stable / gen.c_file.name).is_file():
        stable.mkdir(parents=True, exist_ok=True)
        for f in (gen.h_file, gen.c_file):  # the .c last: its presence marks completion
            shutil.copyfile(f, stable / f".{f.name}.tmp")
            os.replace(stable / f".{f.name}.tmp", stable / f.name)
    gen = GeneratedSources(stable / gen.c_file.name, stable / gen.h_file.name, gen.symbol)
    out_dir = stable
    defines = {"NNRT_HARNESS_MODEL": gen.symbol, **extras.defines}
    if trace:
        defines["NNRT_TRACE"] = "1"
    include_dirs: tuple[Path, ...] = (out_dir, nnrt_dir() / "include", *extras.include_dirs)
    out_of_core = bool(planned.plan.feature_maps or planned.plan.stored)
    if generated.blob is None and not out_of_core:
        libs: tuple[Path, ...] = (build_runtime(target, board=board, sanitize=sanitize,
                                                extras=extras),)
    else:
        # the swap driver's crypto (src/swap/swap_psa.c) needs mbedTLS's defines; the
        # mbedTLS library links after the runtime that calls it
        mbed = mbedtls_sources()
        mbed_defines = library_defines(mbed, target)
        runtime = build(BuildSpec(target=target, sources=tuple(runtime_sources()),
                                  board=board, sanitize=sanitize, kind="library",
                                  include_dirs=(*mbed.include_dirs, *extras.include_dirs),
                                  defines={**mbed_defines, **extras.defines}))
        libs = (runtime, mbedtls_library(target, board=board, sanitize=sanitize))
        include_dirs += mbed.include_dirs
        defines.update(mbed_defines)
        swap = planned.plan.swap
        defines.update(build_defines(target, board, swap.device if swap is not None else ""))
    main_sources: tuple[Path, ...] = (nnrt_dir() / "harness" / "runner_main.c",)
    if out_of_core:
        # feature maps out of core: the tile store over a file (the semihosting file
        # under QEMU) attached by harness/fm_model_main.c, the runner as its library
        runner_lib = build(BuildSpec(
            target=target, kind="library", board=board, sanitize=sanitize,
            sources=main_sources, include_dirs=include_dirs,
            defines={**defines, "main": "nnrt_runner_main"}))
        libs = (runner_lib, *libs)
        main_sources = (nnrt_dir() / "harness" / "fm_model_main.c",)
        defines["NNRT_FM_ATTACH"] = gen.symbol.removesuffix("_model") + "_fm_attach"
    libs += extras.libraries
    spec = BuildSpec(
        target=target,
        sources=(gen.c_file, *main_sources),
        include_dirs=include_dirs,
        defines=defines,
        board=board,
        sanitize=sanitize,
        libraries=libs,
    )
    return build(spec)


def _parse_trace(data: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    pos = 0
    while pos + 8 <= len(data):
        tensor, n = struct.unpack_from("<II", data, pos)
        pos += 8
        out[tensor] = data[pos:pos + n]
        pos += n
    if pos != len(data):
        raise NnoptError("trace file is truncated")
    return out


def invocation_count(planned: PlannedModel, inputs: Sequence[bytes]) -> int:
    """How many invocations ``inputs`` hold: each input's bytes are k whole tensors, the
    same k for every input (k > 1 runs k inferences in sequence, state carried over).
    Raises NnoptError naming the input whose size does not fit."""
    g = planned.graph
    if len(inputs) != len(g.inputs):
        raise NnoptError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    counts: list[int] = []
    for i, (t, data) in enumerate(zip(g.inputs, inputs, strict=True)):
        need = g.tensors[t].nbytes
        if need == 0 or len(data) == 0 or len(data) % need:
            raise NnoptError(f"input {i} ({g.tensors[t].name}) needs {need} bytes, got "
                             f"{len(data)} (one whole tensor per invocation: k tensors "
                             "back to back run k invocations)",
                             hint="input files hold the raw tensor bytes (e.g. int8 NHWC), "
                             "k tensors back to back for k invocations")
        counts.append(len(data) // need)
    if len(set(counts)) > 1:
        raise NnoptError("the inputs hold different numbers of invocations: "
                         + ", ".join(f"input {i}: {c}" for i, c in enumerate(counts)),
                         hint="give every input the same number of whole tensors")
    return counts[0] if counts else 1


def run_planned(planned: PlannedModel, inputs: Sequence[bytes], *, target: Target = "host",
                board: Board | None = None, trace: bool = False, sanitize: bool = False,
                workdir: Path | None = None, allocator: str = "static",
                swap_key: bytes | None = None, blob: Path | None = None,
                swap_key_id: int | None = None, key_store: Path | None = None,
                extras: RuntimeExtras = NO_EXTRAS,
                progress: Callable[[str], None] | None = None,
                timeout_s: float = 600) -> RunOutput:
    """Run the planned model on ``target``: one inference, or k in sequence when every
    input holds k whole tensors back to back (the model's state carried from one to the
    next; each output then holds the k results back to back; ``trace`` keeps the last
    invocation's tensors; ``instructions`` counts the first). ``allocator`` as in
    :func:`nnopt.codegen.c_model.generate`. A plan that streams weights is built with
    ``swap_key`` compiled in and runs on ``blob`` (default: the blob generated with
    the sources, sealed with ``swap_key``). With ``swap_key_id`` the build holds no key
    and opens the blob by that PSA key id: host only, run inside ``key_store`` (a
    directory of PSA ITS files, :mod:`nnopt.swap.provision`). ``extras``: see
    :class:`RuntimeExtras`. ``progress`` is told each stage as it starts (building,
    running), for the command's progress line. ``timeout_s`` bounds the run (QEMU: VGG16's
    inference takes tens of minutes)."""
    say = progress or (lambda _stage: None)
    if swap_key_id is not None:
        check_key_store(target, key_store)
        if blob is not None:
            blob = blob.resolve()  # the program runs in the key store directory

    g = planned.graph
    k = invocation_count(planned, inputs)
    with tempfile.TemporaryDirectory(prefix="nnopt-run-") as tmp:
        work = (workdir or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        firmware = "executable" if target == "host" else "firmware"
        say(f"building the {target} {firmware} (cached by content)")
        exe = build_planned(planned, target, work / "gen", board=board, trace=trace,
                            sanitize=sanitize, allocator=allocator, swap_key=swap_key,
                            swap_key_id=swap_key_id, extras=extras)
        args: list[str] = []
        if planned.plan.feature_maps or planned.plan.stored:
            args += ["-f", str(work / "tiles.bin")]  # the tile store's file
        blob_path: Path | None = None
        if swap_of(planned.plan) is not None:
            blob_path = blob or work / "gen" / f"{planned.plan.model}_swap.bin"
            args += ["-b", str(blob_path)]
        elif blob is not None:
            raise NnoptError("a blob was given but this plan streams no weights",
                             hint="plan with --swap force (or auto on a board with "
                             "external flash) to stream weights")
        if k > 1:  # each input file holds the k tensors, each output receives k
            args += ["-n", str(k)]
        for i, data in enumerate(inputs):
            p = work / f"in{i}.bin"
            p.write_bytes(data)
            args += ["-i", str(p)]
        outs = [work / f"out{i}.bin" for i in range(len(g.outputs))]
        for p in outs:
            args += ["-o", str(p)]
        trace_file = work / "trace.bin"
        if trace:
            trace_file.write_bytes(b"")
            args += ["-t", str(trace_file)]
        say(f"running {k} inference(s) on {target}"
            + ("" if target == "host" else " (emulated by QEMU)"))
        res = run(exe, target, args, board=board, timeout_s=timeout_s,
                  cwd=key_store if swap_key_id is not None else None)
        if res.exit_code != 0 and blob_path is not None:
            err = blob_error(blob_path, res.stdout + res.stderr, key_id=swap_key_id,
                             key_store=key_store)
            if err is not None:
                raise err
        if res.exit_code != 0:
            raise ToolchainError(
                f"the model executable failed on {target} (exit code {res.exit_code}): "
                + (res.stdout + res.stderr).strip()[-2000:],
                hint="this is a bug in nnopt if the model planned without errors; "
                "please report it with the model")
        traced = _parse_trace(trace_file.read_bytes()) if trace else {}
        stats = None
        if DYN_TRACE_STATS in traced:
            hw, cap, lo, hi, nc = struct.unpack("<5I", traced.pop(DYN_TRACE_STATS))
            stats = {"high_water": hw, "capacity": cap, "bytes_moved": lo | hi << 32,
                     "compactions": nc}
        return RunOutput(
            outputs=[p.read_bytes() for p in outs],
            trace=traced,
            instructions=res.instructions,
            executable=exe,
            allocator_stats=stats,
            invocations=k,
            stack_bytes=_stack_used(res.stdout),
        )
