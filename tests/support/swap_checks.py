"""Helpers of the swap tests (test_swap_cli, test_swap_driver, test_swap_key_id): the
CLI as a subprocess, clean-error checks, input files, and real sealed blobs read by the
C swap driver harness (tests/swap/swap_reader_main.c)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conftest import REPO, model_path
from nnopt.boards import load_board
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import BuildSpec, Target, build
from nnopt.frontend.tflite import load_model
from nnopt.paths import nnrt_dir
from nnopt.planner import PlanOptions, plan_model
from nnopt.swap import SwapOptions, plan_swap, write_model_blob
from nnopt.swap import sealed_blob as B
from nnopt.swap.mbedtls_build import MbedtlsSources, library_defines, mbedtls_library
from nnopt.swap.placement import blob_chunks
from nnopt.testing.harness import random_inputs, run_tflm

KWS = "mlperf_tiny/kws_ref_model.tflite"


def nnopt(*args: str | Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("NNOPT_SWAP_KEY")}
    return subprocess.run([sys.executable, "-m", "nnopt.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=1800,
                          env={**e, **(env or {})})


def clean_error(res: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """A user error: the exit code, an `error:` line, no traceback."""
    assert res.returncode == code, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    assert "error: " in res.stderr
    return res.stderr


def write_inputs(model: Path, tmp: Path, seed: int) -> tuple[list[np.ndarray], list[str]]:
    xs = random_inputs(model.read_bytes(), seed=seed)
    args: list[str] = []
    for i, x in enumerate(xs):
        p = tmp / f"in{seed}_{i}.bin"
        p.write_bytes(np.ascontiguousarray(x).tobytes())
        args += ["-i", str(p)]
    return xs, args


def assert_matches_tflm(model: Path, xs: list[np.ndarray], out: Path) -> None:
    want, _ = run_tflm(model.read_bytes(), xs)
    got = np.frombuffer(out.read_bytes(), dtype=want[0].dtype).reshape(want[0].shape)
    np.testing.assert_array_equal(got, want[0])



HARNESS = REPO / "tests" / "swap" / "swap_reader_main.c"


EXIT = {s: (0 if s == Status.OK else 10 - int(s)) for s in Status}


def reader(mbed: MbedtlsSources, target: Target, *, sanitize: bool = False,
           board: str | None = None, pipeline_frames: bool = False) -> Path:
    """The swap reader harness (tests/swap/swap_reader_main.c); ``pipeline_frames``
    builds the driver with NNRT_SWAP_PIPELINE_FRAMES=1."""
    b = load_board(board) if board else None
    defines = dict(library_defines(mbed, target))
    if pipeline_frames:
        defines["NNRT_SWAP_PIPELINE_FRAMES"] = "1"
    spec = BuildSpec(
        target=target,
        sources=(HARNESS, nnrt_dir() / "src" / "swap" / "swap.c",
                 nnrt_dir() / "src" / "swap" / "swap_psa.c"),
        include_dirs=mbed.include_dirs, defines=defines, sanitize=sanitize,
        board=b, libraries=(mbedtls_library(target, board=b, sanitize=sanitize),))
    return build(spec)


@dataclass(frozen=True)
class RealBlob:
    path: Path
    key: bytes
    layout: bytes
    algorithm: int
    plain: list[bytes]  # per chunk
    parsed: B.ParsedSwapBlob

    def args(self, path: Path | None = None, key: bytes | None = None) -> list[str]:
        return ["-b", str(path or self.path), "-k", (key or self.key).hex(),
                "-l", self.layout.hex(), "-a", str(self.algorithm),
                "-n", str(len(self.plain))]


def make_blob(tmp: Path, model: str, algorithm: str, staging: int) -> RealBlob:
    """A real blob: the model's weights forced into swap mode, chunked for `staging`."""
    g = load_model(model_path(model))
    pm = plan_model(g, PlanOptions(check_kernels=False))
    s = plan_swap(pm.graph, pm.plan, None, SwapOptions(mode="force", algorithm=algorithm,
                                                       staging_bytes=staging))
    alg = B.algorithm_id(algorithm)
    key = bytes(random.Random(alg).randrange(256) for _ in range(B.KEY_BYTES[alg]))
    wb = write_model_blob(tmp / f"{Path(model).stem}_{algorithm}.bin", pm.graph, s,
                          "f" * 64, key)
    data = wb.path.read_bytes()
    return RealBlob(wb.path, key, wb.layout_id, alg, [c.data for c in blob_chunks(pm.graph, s)],
                    B.parse_swap_blob(data))

