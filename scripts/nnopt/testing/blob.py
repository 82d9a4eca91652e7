"""Run a model blob through nnrt's loader: the harness ``modules/nnrt/harness/
blob_runner_main.c`` (reads the blob, checks, opens and invokes it on the dynamic
allocator, writes the outputs and optionally every traced tensor) built for the host
or a QEMU board. Used by the loader's tests and by ``benchmarks/bench_allocator.py``.
"""

from __future__ import annotations

import contextlib
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from ..blob.writer import parse_blob
from ..boards import Board, load_board
from ..cdefs import Status
from ..errors import BlobError
from ..firmware.toolchain import BuildSpec, Target, build, run
from ..paths import nnrt_dir
from ..runner import DYN_TRACE_STATS, _parse_trace, build_runtime

#: The runner's exit status for each loader status (0: OK).
EXIT = {s: (0 if s == Status.OK else 10 - int(s)) for s in Status}
_STATUS = re.compile(r"loader: status=(-?\d+)")


def runner_source() -> Path:
    return nnrt_dir() / "harness" / "blob_runner_main.c"


def _pow2(n: int, lo: int) -> int:
    p = lo
    while p < n:
        p *= 2
    return p


def runner(target: Target, *, sanitize: bool = False, board: Board | None = None,
           blob_max: int = 1 << 20, arena_max: int = 1 << 18) -> Path:
    """The blob runner executable for ``target`` (cached by the toolchain)."""
    lib = build_runtime(target, board=board, sanitize=sanitize)
    return build(BuildSpec(
        target=target, sources=(runner_source(),), sanitize=sanitize, board=board,
        libraries=(lib,),
        defines={"NNRT_RUNNER_BLOB_MAX": f"{blob_max}u", "NNRT_RUNNER_ARENA_MAX": f"{arena_max}u"}))


@dataclass(frozen=True)
class BlobRun:
    exit_code: int
    status: int | None
    outputs: list[bytes]
    trace: dict[int, bytes]
    stats: tuple[int, ...] | None
    instructions: int | None
    text: str


def run_blob(blob: bytes, inputs: list[bytes], n_outputs: int, tmp: Path, *,
             target: Target = "host", trace: bool = False, sanitize: bool = True,
             check_only: bool = False) -> BlobRun:
    """Run ``blob`` on ``inputs`` in ``tmp`` (host: under ASan/UBSan unless ``sanitize``
    is False; a QEMU target on its default board, nucleo_f767zi for qemu-m7)."""
    board = load_board("nucleo_f767zi") if target != "host" else None
    arena = 0
    with contextlib.suppress(BlobError):
        arena = parse_blob(blob).header["arena_bytes"]
    if target == "host":  # one build for most blobs
        exe = runner(target, sanitize=sanitize, blob_max=_pow2(len(blob), 1 << 20),
                     arena_max=_pow2(arena, 1 << 18))
    else:
        exe = runner(target, board=board, blob_max=_pow2(len(blob), 4096),
                     arena_max=_pow2(arena, 4096))
    bp = tmp / "model.nnmb"
    bp.write_bytes(blob)
    args = ["-b", str(bp), "-n", str(len(blob))]
    if check_only:
        args.append("-c")
    for i, x in enumerate(inputs):
        (tmp / f"in{i}.bin").write_bytes(x)
        args += ["-i", str(tmp / f"in{i}.bin")]
    outs = [tmp / f"out{i}.bin" for i in range(n_outputs)]
    for p in outs:
        p.unlink(missing_ok=True)
        args += ["-o", str(p)]
    tp = tmp / "trace.bin"
    if trace:
        args += ["-t", str(tp)]
    res = run(exe, target, args, board=board, timeout_s=600)
    m = _STATUS.search(res.stdout)
    traced: dict[int, bytes] = {}
    stats = None
    if trace and res.exit_code == 0:
        traced = _parse_trace(tp.read_bytes())
        stats = struct.unpack("<5I", traced.pop(DYN_TRACE_STATS))
    return BlobRun(res.exit_code, int(m[1]) if m else None,
                   [p.read_bytes() for p in outs if p.is_file()], traced, stats,
                   res.instructions, res.stdout + res.stderr)
