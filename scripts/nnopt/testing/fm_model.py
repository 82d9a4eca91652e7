"""Build and run a model whose feature maps go out of core (Plan.feature_maps) with the
harness behind modules/nnrt/harness/fm_model_main.c: the tile store over a file (host
file; the semihosting file under QEMU), the generic runner as a library, nnopt's
mbedTLS for the AEAD. Used by tests/test_swap_fm_model.py and the out-of-core
benchmark."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..boards import Board
from ..driver import generate
from ..firmware.toolchain import BuildSpec, Target, build, run
from ..paths import nnrt_dir
from ..planner import PlannedModel
from ..runner import _parse_trace, runtime_sources
from ..swap.mbedtls_build import mbedtls_library, mbedtls_sources
from ..swap.pipeline import build_defines

#: The weight blob's key in these runs (a test key).
SWAP_KEY = bytes(range(32))

_FM = re.compile(r"fm: writes=(\d+) reads=(\d+)(?: written_bytes=(\d+) read_bytes=(\d+))?")
_INSTR = re.compile(r"nnrt: instructions=(\d+)")


@dataclass(frozen=True)
class FmRun:
    exit_code: int
    text: str
    output: bytes
    trace: dict[int, bytes]
    writes: int
    reads: int
    instructions: int | None
    written_bytes: int = -1  # sealed bytes through the device, tags included
    read_bytes: int = -1
    outputs: list[bytes] = field(default_factory=list)


def build_fm_model(pm: PlannedModel, out_dir: Path, target: Target,
                   board: Board | None) -> Path:
    """The executable (``-f TILES [-x N] [-R N M]`` then the runner's options; with
    streamed weights ``-b <out_dir>/<name>_swap.bin``: :func:`weight_blob`)."""
    mbed = mbedtls_sources()
    generated = generate(pm, out_dir, key=SWAP_KEY)  # a blob beside when weights stream
    gen = generated.sources
    name = gen.symbol.removesuffix("_model")
    defs = {"NNRT_HARNESS_MODEL": gen.symbol, "main": "nnrt_runner_main", "NNRT_TRACE": "1",
            **build_defines(target, board,
                            pm.plan.swap.device if pm.plan.swap is not None else ""),
            # a graph input in storage: the harness writes it through the model's writer
            **({"NNRT_HARNESS_INPUT_WRITER": f"{name}_input_write"}
               if any(m.written_by == "application" for m in pm.plan.stored) else {})}
    runner_lib = build(BuildSpec(target=target, kind="library", board=board,
                                 sources=(nnrt_dir() / "harness" / "runner_main.c",),
                                 defines=defs))
    runtime_lib = build(BuildSpec(target=target, kind="library", board=board,
                                  sources=tuple(runtime_sources()),
                                  include_dirs=mbed.include_dirs, defines=dict(mbed.defines)))
    return build(BuildSpec(
        target=target, board=board,
        sources=(gen.c_file, nnrt_dir() / "harness" / "fm_model_main.c"),
        include_dirs=(gen.c_file.parent, *mbed.include_dirs),
        defines={**mbed.defines, "NNRT_FM_ATTACH": f"{name}_fm_attach", "NNRT_TRACE": "1"},
        libraries=(runner_lib, runtime_lib, mbedtls_library(target, board=board))))


def weight_blob(pm: PlannedModel, out_dir: Path) -> list[str]:
    """The runner's ``-b BLOB`` when the plan streams weights (else nothing)."""
    blob = out_dir / f"{pm.plan.model}_swap.bin"
    return ["-b", str(blob)] if pm.plan.swap is not None and pm.plan.swap.enabled else []


def run_fm_model(exe: Path, target: Target, board: Board | None, tmp: Path,
                 inputs: list[np.ndarray], extra: list[str] | None = None,
                 outputs: int = 1, timeout_s: float = 900) -> FmRun:
    """One run; ``extra``: the attacks (``-x N``, ``-R N M``) and runner options
    (``-n K``: K records per input file are written); ``outputs``: the model's outputs
    (``FmRun.output`` the first, ``FmRun.outputs`` all)."""
    extra = list(extra or [])
    for p in tmp.glob("run_*"):
        p.unlink()
    args = ["-f", str(tmp / "run_tiles.bin"), *extra]
    k = int(extra[extra.index("-n") + 1]) if "-n" in extra else 1
    for i, x in enumerate(inputs):
        (tmp / f"run_in{i}.bin").write_bytes(np.ascontiguousarray(x).tobytes() * k)
        args += ["-i", str(tmp / f"run_in{i}.bin")]
    outs = [tmp / ("run_out.bin" if i == 0 else f"run_out{i}.bin") for i in range(outputs)]
    for o in outs:
        args += ["-o", str(o)]
    args += ["-t", str(tmp / "run_trace.bin")]
    res = run(exe, target, args, board=board, timeout_s=timeout_s)
    out = outs[0]
    tr = tmp / "run_trace.bin"
    text = res.stdout + res.stderr
    m = _FM.search(text)
    return FmRun(res.exit_code, text, out.read_bytes() if out.is_file() else b"",
                 _parse_trace(tr.read_bytes()) if tr.is_file() else {},
                 int(m[1]) if m else -1, int(m[2]) if m else -1, res.instructions,
                 int(m[3]) if m and m[3] else -1, int(m[4]) if m and m[4] else -1,
                 [o.read_bytes() if o.is_file() else b"" for o in outs])
