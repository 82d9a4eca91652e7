"""A model whose feature maps go out of core (issue 39), end to end: five 110,592-byte
feature maps live at once (552,960 B) exceed nucleo_f767zi's SRAM + DTCM; the planner
evicts whole feature maps to the board's storage (passes.fm_evict), the generated code
seals them into the tile store (nnrt/fmstore.h) after their last use and reads them back
before the next; outputs and every intermediate bit-exact with the tflite-micro
interpreter, on the host and on QEMU M7 within the board's SRAM; a flipped bit in a
written tile and a stale tile (an earlier inference's, replayed) stop the inference with
NNRT_ERR_AUTH, never a wrong result."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.codegen.c_model import generate
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.paths import nnrt_dir
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import _parse_trace, runtime_sources
from nnopt.swap.mbedtls_build import MbedtlsSources, mbedtls_library
from nnopt.testing.big_models import Layer, conv_chain
from nnopt.testing.harness import random_inputs, run_tflm
from support.cases import compare_trace

NUCLEO = load_board("nucleo_f767zi")
SHIM = Path(__file__).parent / "swap" / "fm_model_main.c"
LAYERS = [Layer(48), Layer(48), Layer(48), Layer(48, skip_from=1), Layer(48, skip_from=0),
          Layer(48, skip_from=-1), Layer(16, stride=2)]


def _model() -> bytes:
    return conv_chain((1, 48, 48, 48), LAYERS, seed=4, name="fm_model")


def _planned() -> PlannedModel:
    data = _model()
    return plan_model(load_model_bytes(data, name="fm_model"),
                      PlanOptions(board=NUCLEO, feature_maps="auto"), source_bytes=data)


def test_plan_evicts_within_sram() -> None:
    pm = _planned()
    p = pm.plan
    ram = NUCLEO.regions["sram"].size + NUCLEO.regions["dtcm"].size
    assert p.peak_live_bytes > ram  # no arrangement of the RAM regions holds them
    assert p.feature_maps and p.arena_bytes <= NUCLEO.sram_bytes
    check_budget(p, NUCLEO)
    for e in p.feature_maps:
        assert e.write_after < e.read_before and e.device == "sd_card"
        assert e.bytes == 110_592
    d = json.loads(json.dumps(p.to_json()))
    assert len(d["feature_maps"]) == len(p.feature_maps)
    assert Plan.from_json(d).feature_maps == p.feature_maps
    # without the option (the default): today's plan, refused by the budget check
    data = _model()
    off = plan_model(load_model_bytes(data, name="fm_model"), PlanOptions(board=NUCLEO),
                     source_bytes=data).plan
    assert not off.feature_maps


@dataclass(frozen=True)
class Built:
    exe: Path
    pm: PlannedModel


def _build(mbed: MbedtlsSources, tmp: Path, target: Target, board: str | None) -> Built:
    pm = _planned()
    gen = generate(pm, tmp / "gen")
    b = load_board(board) if board else None
    defs = {"NNRT_HARNESS_MODEL": gen.symbol, "main": "nnrt_runner_main", "NNRT_TRACE": "1"}
    runner_lib = build(BuildSpec(target=target, kind="library", board=b,
                                 sources=(nnrt_dir() / "harness" / "runner_main.c",),
                                 defines=defs))
    runtime_lib = build(BuildSpec(target=target, kind="library", board=b,
                                  sources=tuple(runtime_sources()),
                                  include_dirs=mbed.include_dirs, defines=dict(mbed.defines)))
    exe = build(BuildSpec(
        target=target, board=b, sources=(gen.c_file, SHIM),
        include_dirs=(gen.c_file.parent, *mbed.include_dirs),
        defines={**mbed.defines, "NNRT_FM_ATTACH": "fm_model_fm_attach", "NNRT_TRACE": "1"},
        libraries=(runner_lib, runtime_lib, mbedtls_library(target, board=b))))
    return Built(exe, pm)


def _run(bt: Built, target: Target, tmp: Path, board: str | None, extra: list[str],
         inputs: list[np.ndarray]) -> tuple[int, str, bytes, dict[int, bytes]]:
    for p in tmp.glob("run_*"):
        p.unlink()
    args = ["-f", str(tmp / "run_tiles.bin"), *extra]
    k = int(extra[extra.index("-n") + 1]) if "-n" in extra else 1
    for i, x in enumerate(inputs):  # -n K: K records per input file
        (tmp / f"run_in{i}.bin").write_bytes(np.ascontiguousarray(x).tobytes() * k)
        args += ["-i", str(tmp / f"run_in{i}.bin")]
    args += ["-o", str(tmp / "run_out.bin"), "-t", str(tmp / "run_trace.bin")]
    res = run(bt.exe, target, args, board=load_board(board) if board else None, timeout_s=900)
    out = (tmp / "run_out.bin").read_bytes() if (tmp / "run_out.bin").is_file() else b""
    tr = (tmp / "run_trace.bin").read_bytes() if (tmp / "run_trace.bin").is_file() else b""
    return res.exit_code, res.stdout + res.stderr, out, _parse_trace(tr) if tr else {}


def _check(mbed: MbedtlsSources, tmp: Path, target: Target, board: str | None) -> None:
    bt = _build(mbed, tmp, target, board)
    data = _model()
    ins = random_inputs(data, 7)
    ref, ref_all = run_tflm(data, ins)
    code, text, out, trace = _run(bt, target, tmp, board, [], ins)
    assert code == 0, text
    assert out == ref[0].tobytes()
    compare_trace(bt.pm, trace, ref, ref_all)
    n = len(bt.pm.plan.feature_maps)
    m = re.search(r"fm: writes=(\d+) reads=(\d+)", text)
    assert m is not None and (int(m[1]), int(m[2])) == (n, n), text
    # two inferences: every tile written and read once per inference
    code, text, out, _ = _run(bt, target, tmp, board, ["-n", "2"], ins)
    assert code == 0 and out[-len(ref[0].tobytes()):] == ref[0].tobytes(), text
    m = re.search(r"fm: writes=(\d+) reads=(\d+)", text)
    assert m is not None and (int(m[1]), int(m[2])) == (2 * n, 2 * n), text
    # a flipped bit in the first tile written; a stale tile (inference 1's first tile
    # written again in place of inference 2's): NNRT_ERR_AUTH (-4), exit 5, no output
    for extra in (["-x", "0"], ["-n", "2", "-R", str(n), "0"]):
        code, text, out, _ = _run(bt, target, tmp, board, extra, ins)
        assert code == 5 and "status -4" in text, (extra, text)


def test_host_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    _check(mbed, tmp_path, "host", None)


@pytest.mark.qemu
def test_qemu_m7_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check(mbed, tmp_path, "qemu-m7", "nucleo_f767zi")
