"""Models with weights forced into external flash, end to end: generated code with
streamed ops (nnopt.swap.codegen), the swap driver, mbedTLS, a real sealed blob;
outputs and every intermediate tensor bit-exact with the tflite-micro interpreter, on
the host and under QEMU within the nucleo_f767zi budget; a tampered blob stops the
inference with the defined status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, model_path
from nnopt.boards import Board, load_board
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import NUMPY_DTYPE
from nnopt.paths import nnrt_dir
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import _parse_trace, run_planned, runtime_sources
from nnopt.swap import SwapOptions, SwapPlan, plan_swap
from nnopt.swap import sealed_blob as B
from nnopt.swap.codegen import generate_swapped
from nnopt.swap.mbedtls_build import mbedtls_library, mbedtls_sources
from nnopt.testing.harness import random_inputs, run_tflm

SHIM = REPO / "tests" / "swap" / "swap_model_main.c"
EXIT_INVOKE = 5  # modules/nnrt/harness/runner_main.c
_STATS = re.compile(r"swap: chunks=(\d+) bytes=(\d+) decrypt=(\d+) wait=(\d+) "
                    r"flash_reads=(\d+) flash_stall=(\d+)")


@dataclass(frozen=True)
class Swapped:
    pm: PlannedModel
    swap: SwapPlan
    exe: Path
    blob: Path
    key: bytes
    model: bytes


def build_swapped(model: str, tmp: Path, staging: int, target: Target = "host",
                  board: Board | None = None, algorithm: str = "chacha20-poly1305",
                  trace: bool = True) -> Swapped:
    """Plan with every streamable weight forced external, generate, build."""
    data = model_path(model).read_bytes()
    pm = plan_model(load_model_bytes(data), PlanOptions(board=board), source_bytes=data)
    swap = plan_swap(pm.graph, pm.plan, board, SwapOptions(
        mode="force", algorithm=algorithm, staging_bytes=staging, kernel_channel_ranges=False))
    return build_from_plan(pm, swap, data, tmp, target, board, trace)


def build_from_plan(pm: PlannedModel, swap: SwapPlan, data: bytes, tmp: Path,
                    target: Target = "host", board: Board | None = None,
                    trace: bool = True) -> Swapped:
    """Generate the model with streamed ops and its blob; build it with the generic
    harness (as a library, its main renamed) behind tests/swap/swap_model_main.c."""
    key = bytes(range(B.KEY_BYTES[B.algorithm_id(swap.algorithm)]))
    gen = generate_swapped(pm, tmp / "gen", swap, key)
    mbed = mbedtls_sources()
    name = gen.sources.symbol.removesuffix("_model")
    harness_defs = {"NNRT_HARNESS_MODEL": gen.sources.symbol, "main": "nnrt_runner_main"}
    if trace:
        harness_defs["NNRT_TRACE"] = "1"
    runner_lib = build(BuildSpec(target=target, kind="library", board=board,
                                 sources=(nnrt_dir() / "harness" / "runner_main.c",),
                                 defines=harness_defs))
    runtime_lib = build(BuildSpec(target=target, kind="library", board=board,
                                  sources=tuple(runtime_sources()),
                                  include_dirs=mbed.include_dirs, defines=dict(mbed.defines)))
    defs = {**mbed.defines, "NNRT_SWAP_ATTACH": f"{name}_swap_attach",
            "NNRT_SWAP_STATS": f"{name}_swap_stats"}
    if trace:
        defs["NNRT_TRACE"] = "1"
    exe = build(BuildSpec(
        target=target, board=board, sources=(gen.sources.c_file, SHIM),
        include_dirs=(gen.sources.c_file.parent, *mbed.include_dirs), defines=defs,
        libraries=(runner_lib, runtime_lib, mbedtls_library(target, board=board))))
    return Swapped(pm, swap, exe, gen.blob, key, data)


@dataclass(frozen=True)
class Ran:
    exit_code: int
    outputs: list[bytes]
    trace: dict[int, bytes]
    stdout: str
    stats: tuple[int, ...] | None
    instructions: int | None


def run_swapped(sw: Swapped, inputs: list[np.ndarray], tmp: Path, target: Target = "host",
                board: Board | None = None, blob: Path | None = None,
                trace: bool = True) -> Ran:
    args = ["-b", str(blob or sw.blob)]
    for i, x in enumerate(inputs):
        p = tmp / f"in{i}.bin"
        p.write_bytes(np.ascontiguousarray(x).tobytes())
        args += ["-i", str(p)]
    outs = [tmp / f"out{i}.bin" for i in range(len(sw.pm.graph.outputs))]
    for p in outs:
        p.unlink(missing_ok=True)
        args += ["-o", str(p)]
    tr = tmp / "trace.bin"
    if trace:
        args += ["-t", str(tr)]
    res = run(sw.exe, target, args, board=board, timeout_s=900)
    m = _STATS.search(res.stdout)
    return Ran(res.exit_code, [p.read_bytes() if p.is_file() else b"" for p in outs],
               _parse_trace(tr.read_bytes()) if trace and tr.is_file() else {},
               res.stdout + res.stderr, tuple(int(x) for x in m.groups()) if m else None,
               res.instructions)


def assert_bitexact(sw: Swapped, inputs: list[np.ndarray], ran: Ran) -> None:
    assert ran.exit_code == 0, ran.stdout
    want_out, want_tensors = run_tflm(sw.model, inputs)
    g = sw.pm.graph
    for t, got, want in zip(g.outputs, ran.outputs, want_out, strict=True):
        arr = np.frombuffer(got, dtype=NUMPY_DTYPE[g.tensors[t].dtype])
        np.testing.assert_array_equal(arr.reshape(want.shape), want)
    compared = 0
    for t, data in ran.trace.items():
        if t in want_tensors:
            arr = np.frombuffer(data, dtype=NUMPY_DTYPE[g.tensors[t].dtype])
            np.testing.assert_array_equal(arr.reshape(want_tensors[t].shape), want_tensors[t],
                                          err_msg=f"tensor {t} ({g.tensors[t].name})")
            compared += 1
    assert compared >= len(g.ops) // 2


CASES = [
    # model, staging bytes: chosen so layers stream whole and FCs split into slices
    ("mlperf_tiny/kws_ref_model.tflite", 4096),
    ("mlperf_tiny/ad01_int8.tflite", 4096),
    ("keras/lenet5_int8.tflite", 8192),
]


@pytest.mark.parametrize(("model", "staging"), CASES)
def test_host_forced_swap_bitexact(mbed_ok: None, model: str, staging: int,
                                   tmp_path: Path) -> None:
    sw = build_swapped(model, tmp_path, staging)
    s = sw.swap
    assert s.enabled and s.external_weight_bytes > 0.5 * sw.pm.plan.weight_bytes
    inputs = random_inputs(sw.model, seed=3)
    ran = run_swapped(sw, inputs, tmp_path)
    assert_bitexact(sw, inputs, ran)
    assert ran.stats is not None
    assert ran.stats[0] == s.chunk_count  # every chunk authenticated once
    assert ran.stats[4] == s.chunk_count + 2  # read once each (+ header and table)
    # the streamed weights are not in the firmware image
    c_text = next((tmp_path / "gen").glob("*_model.c")).read_text()
    for t in s.external_tensors:
        assert f" w{t}[" not in c_text


def test_host_split_layers_present() -> None:
    """The cases above cover layers split into several chunks, not only whole ones."""
    for model, staging in CASES[1:]:
        data = model_path(model).read_bytes()
        pm = plan_model(load_model_bytes(data), PlanOptions(check_kernels=False))
        s = plan_swap(pm.graph, pm.plan, None, SwapOptions(
            mode="force", staging_bytes=staging, kernel_channel_ranges=False))
        assert any(t.chunks > 1 for t in s.tensors if t.pool == "external")


def test_host_tampered_blob_stops_inference(mbed_ok: None, tmp_path: Path) -> None:
    sw = build_swapped("mlperf_tiny/ad01_int8.tflite", tmp_path, 4096, trace=False)
    inputs = random_inputs(sw.model, seed=1)
    data = sw.blob.read_bytes()
    p = B.parse_swap_blob(data)
    bad = tmp_path / "bad.bin"
    for k in (0, len(p.entries) // 2, len(p.entries) - 1):
        e = p.entries[k]
        b = bytearray(data)
        b[e.offset + e.sealed_bytes // 3] ^= 0x20
        bad.write_bytes(bytes(b))
        ran = run_swapped(sw, inputs, tmp_path, blob=bad, trace=False)
        assert ran.exit_code == EXIT_INVOKE, ran.stdout
        assert f"status {int(Status.ERR_AUTH)} (NNRT_ERR_AUTH)" in ran.stdout
        assert ran.outputs == [b""]  # nothing written
        assert ran.stats is not None and ran.stats[0] == k  # chunks before k were fine
    # another key: the same blob sealed with a different key
    other = B.seal_blob(B.read_blob(data, sw.key), bytes(32), algorithm=p.header.algorithm,
                        layout=p.header.layout_id)
    bad.write_bytes(other)
    ran = run_swapped(sw, inputs, tmp_path, blob=bad, trace=False)
    assert ran.exit_code == EXIT_INVOKE and "NNRT_ERR_AUTH" in ran.stdout
    # truncated, bad magic, another model's blob: attach fails with FORMAT
    for blob in (data[:-1], b"NNSX" + data[4:], data[:64]):
        bad.write_bytes(blob)
        ran = run_swapped(sw, inputs, tmp_path, blob=bad, trace=False)
        assert ran.exit_code == 10 - int(Status.ERR_FORMAT), ran.stdout
    lenet = build_swapped("keras/lenet5_int8.tflite", tmp_path / "l", 8192, trace=False)
    ran = run_swapped(sw, inputs, tmp_path, blob=lenet.blob, trace=False)
    assert ran.exit_code == 10 - int(Status.ERR_FORMAT)
    missing = run_swapped(sw, inputs, tmp_path, blob=tmp_path / "none.bin", trace=False)
    assert missing.exit_code == 10 - int(Status.ERR_IO)


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize(("model", "staging"), CASES[1:])
def test_qemu_m7_forced_swap_bitexact_and_overhead(mbed_ok: None, model: str, staging: int,
                                                   tmp_path: Path) -> None:
    """On the Cortex-M7 (nucleo_f767zi budget): bit-exact, and the instruction-count
    overhead of streaming against the same model with all weights internal."""
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    board = load_board("nucleo_f767zi")
    sw = build_swapped(model, tmp_path, staging, "qemu-m7", board, trace=False)
    inputs = random_inputs(sw.model, seed=4)
    ran = run_swapped(sw, inputs, tmp_path, "qemu-m7", board, trace=False)
    assert ran.exit_code == 0, ran.stdout
    want, _ = run_tflm(sw.model, inputs)
    g = sw.pm.graph
    for t, got, w in zip(g.outputs, ran.outputs, want, strict=True):
        arr = np.frombuffer(got, dtype=NUMPY_DTYPE[g.tensors[t].dtype]).reshape(w.shape)
        np.testing.assert_array_equal(arr, w)
    base = run_planned(sw.pm, [np.ascontiguousarray(x).tobytes() for x in inputs],
                       target="qemu-m7", board=board)
    assert base.outputs == ran.outputs
    assert ran.instructions and base.instructions and ran.stats
    overhead = ran.instructions / base.instructions - 1
    decrypt = ran.stats[2]
    assert 0 < decrypt < ran.instructions
    # streaming costs about the decryption (plus the driver), nothing else
    assert ran.instructions - base.instructions == pytest.approx(decrypt, rel=0.25)
    print(f"\n{model}: swap {ran.instructions:,} vs internal {base.instructions:,} "
          f"instructions (+{overhead:.1%}); decrypt {decrypt:,}; modelled flash stall "
          f"{ran.stats[5]:,} cycles; predicted slowdown {sw.swap.predicted_slowdown:.3f}")


@pytest.mark.slow
def test_host_mobilenet_v2_streamed_bitexact(mbed_ok: None, tmp_path: Path) -> None:
    """MobileNetV2 1.0 224x224 planned for the nucleo_f767zi flash budget with today's
    kernels (whole layers, the FC in slices), weights streamed from the blob: outputs
    and every intermediate bit-exact with TFLM (host; on the board the 2.45 MB
    activation arena additionally needs tiling)."""
    board = load_board("nucleo_f767zi")
    data = model_path("tflm/mobilenet_v2_quantized_1x3x224x224.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data), PlanOptions(board=board), source_bytes=data)
    swap = plan_swap(pm.graph, pm.plan, board, SwapOptions(kernel_channel_ranges=False))
    assert swap.enabled and swap.fits_internal_flash and swap.fits_staging
    sw = build_from_plan(pm, swap, data, tmp_path)
    inputs = random_inputs(data, seed=7)
    ran = run_swapped(sw, inputs, tmp_path)
    assert_bitexact(sw, inputs, ran)
    assert ran.stats is not None and ran.stats[0] == swap.chunk_count


@pytest.mark.qemu
@pytest.mark.slow
def test_qemu_mobilenet_v2_streamed_bitexact(mbed_ok: None, tmp_path: Path) -> None:
    """The nucleo_f767zi swap plan of MobileNetV2 (weights over the 2 MB flash budget
    streamed, ChaCha20-Poly1305) as firmware: on QEMU's Cortex-M3 machine, whose 4 MB
    SRAM holds the 2.45 MB arena that the F767 can only hold once activations are
    tiled. Bit-exact with TFLM; the measured decryption work matches the cost model."""
    from nnopt.firmware.qemu import qemu_available
    from nnopt.swap.costmodel import AEAD_CYCLES_PER_BYTE, AEAD_CYCLES_PER_CHUNK

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    f767, an385 = load_board("nucleo_f767zi"), load_board("mps2_an385")
    data = model_path("tflm/mobilenet_v2_quantized_1x3x224x224.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data), PlanOptions(board=an385), source_bytes=data)
    swap = plan_swap(pm.graph, pm.plan, f767, SwapOptions(kernel_channel_ranges=False))
    sw = build_from_plan(pm, swap, data, tmp_path, "qemu-m3", an385, trace=False)
    inputs = random_inputs(data, seed=7)
    ran = run_swapped(sw, inputs, tmp_path, "qemu-m3", an385, trace=False)
    assert ran.exit_code == 0, ran.stdout
    want, _ = run_tflm(data, inputs)
    got = np.frombuffer(ran.outputs[0], dtype=np.int8).reshape(want[0].shape)
    np.testing.assert_array_equal(got, want[0])
    assert ran.stats is not None and ran.stats[0] == swap.chunk_count
    alg = swap.algorithm
    predicted = sum((c.plain_bytes + B.TAG_BYTES) * AEAD_CYCLES_PER_BYTE[alg]
                    + AEAD_CYCLES_PER_CHUNK[alg] for c in swap.chunks)
    assert ran.stats[2] == pytest.approx(predicted, rel=0.1)
    # Decryption stays a small share of the inference: each streamed weight byte feeds
    # ~170 MACs here, against ~37 instructions per byte of ChaCha20-Poly1305. Measured
    # 5.1 % of 1.29 G instructions (M3, specialised kernels, 2026-11-29), 8.9 % of 737 M
    # with the packed no-DSP kernels of issue 42 (65.6 M, 2026-12-06); the share grows as
    # kernels get faster, so the bound leaves room for that, not for a slower AEAD (which
    # the cost-model check above catches).
    assert ran.instructions and ran.stats[2] < 0.12 * ran.instructions
