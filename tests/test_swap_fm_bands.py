"""Ops whose own working set exceeds RAM run in row bands (issue 39): their feature maps
live in the tile store as sealed row chunks (passes.fm_bands), each band's input rows
(with the halo its window needs) are read back and authenticated, the kernel runs on the
band, the output chunks are sealed and written (codegen/bands.py). Outputs and the
traced intermediates bit-exact with the tflite-micro interpreter (int8 and float32) on
the host and on QEMU M7; a flipped bit in a written chunk and a stale chunk (an earlier
inference's, replayed) stop the inference with NNRT_ERR_AUTH; models that fit keep
their plans; weights too large for the staging buffers stream in channel slices."""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import model_path
from nnopt.boards import load_board
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap.fmap import plan_traffic
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.swap.pipeline import plan_swap_for
from nnopt.testing.big_models import Layer, conv_chain
from nnopt.testing.fm_model import build_fm_model, run_fm_model
from nnopt.testing.harness import random_inputs, run_litert, run_tflm
from support.cases import compare_trace

NUCLEO = load_board("nucleo_f767zi")
# a 3x3 stride-1 conv (halo rows), a stride-2 conv, a residual ADD of two stored maps
LAYERS = [Layer(16), Layer(16, stride=2), Layer(16, skip_from=1), Layer(8),
          Layer(8, stride=2)]
SRAM = {"int8": 14_000, "float32": 40_000}  # well below the 32,000 / 128,000 B live peak


def _model(dtype: str) -> bytes:
    return conv_chain((1, 40, 40, 4), LAYERS, dtype=dtype, seed=5, name=f"bands_{dtype}")


def _planned(dtype: str, feature_maps: str = "auto") -> PlannedModel:
    data = _model(dtype)
    return plan_model(load_model_bytes(data, name=f"bands_{dtype}"),
                      PlanOptions(board=NUCLEO, sram=SRAM[dtype], feature_maps=feature_maps),
                      source_bytes=data)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_plan_bands_within_the_budget(dtype: str) -> None:
    p = _planned(dtype).plan
    assert p.peak_live_bytes > 2 * SRAM[dtype]
    assert p.bands and p.stored and p.arena_bytes <= SRAM[dtype]
    stored = {m.tensor: m for m in p.stored}
    tiles: set[int] = set()
    for m in p.stored:  # each chunk its own tile
        span = set(range(m.first_tile, m.first_tile + m.chunks))
        assert not span & tiles
        tiles |= span
        assert m.device == "sd_card"
    for st in p.bands:
        out = st.tiles[-1]
        rows = [r[:2] for r in out.regions]  # the bands cover the output, in order
        assert rows[0][0] == 0 and all(a[1] == b[0] for a, b in itertools.pairwise(rows))
        for te in st.tiles[:-1]:
            if te.kind == "gather":  # chunks of the stored input, whole chunks
                m = stored[te.tensor]
                assert all(r[0] % m.chunk_rows == 0 for r in te.regions)
    # the JSON round trip; the swap step records the traffic under swap.feature_maps
    pm = plan_swap_for(_planned(dtype), NUCLEO)
    d = json.loads(json.dumps(pm.plan.to_json()))
    back = Plan.from_json(d)
    assert back.bands == p.bands and back.stored == p.stored
    fm = d["swap"]["feature_maps"]
    assert fm["device"] == "sd_card" and fm["written_bytes"] > 0 and fm["read_bytes"] > 0
    assert {t["tensor"] for t in fm["tensors"]} == set(stored)
    assert fm["slowdown"] > 1.0 and fm["energy_mj_per_inference"] > 0


def test_models_that_fit_keep_their_plans() -> None:
    data = _model("int8")
    g = load_model_bytes(data, name="bands_int8")
    off = plan_model(g, PlanOptions(board=NUCLEO), source_bytes=data).plan.to_json()
    on = plan_model(g, PlanOptions(board=NUCLEO, feature_maps="auto"),
                    source_bytes=data).plan.to_json()
    for d in (off, on):
        del d["planning_seconds"], d["planning_time_budget"]
    assert on == off and "bands" not in on and "stored" not in on


def _check(tmp: Path, target: Target, board_name: str | None, dtype: str) -> None:
    board = load_board(board_name) if board_name else None
    pm = _planned(dtype)
    exe = build_fm_model(pm, tmp / "gen", target, board)
    data = _model(dtype)
    ins = random_inputs(data, 7)
    ref, ref_all = run_tflm(data, ins)
    r = run_fm_model(exe, target, board, tmp, ins)
    assert r.exit_code == 0, r.text
    assert r.output == ref[0].tobytes()
    compare_trace(pm, r.trace, ref, ref_all)  # every tensor whole in RAM at some point
    fm = plan_traffic(pm.graph, pm.plan, NUCLEO)
    tiles = sum(m.chunks for m in pm.plan.stored)
    assert r.writes == tiles, r.text  # each chunk written once per inference
    assert r.reads >= tiles  # and read at least once (halo rows: some twice)
    assert (r.written_bytes, r.read_bytes) == (fm.written_bytes, fm.read_bytes)  # as planned
    assert fm.written_bytes == sum(m.chunk_bytes * (m.chunks - 1) + m.last_bytes + 16 * m.chunks
                                   for m in pm.plan.stored)
    if dtype != "int8":
        return
    # a flipped bit in the first chunk written; a stale chunk (inference 1's first
    # written again in place of inference 2's): NNRT_ERR_AUTH (-4), exit 5, no output
    for extra in (["-x", "0"], ["-x", str(tiles - 1)], ["-n", "2", "-R", str(tiles), "0"]):
        r = run_fm_model(exe, target, board, tmp, ins, extra)
        assert r.exit_code == 5 and "status -4" in r.text, (extra, r.text)
        if "-n" not in extra:
            assert r.output == b""


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_host_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path,
                                              dtype: str) -> None:
    _check(tmp_path, "host", None, dtype)


@pytest.mark.qemu
def test_qemu_m7_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check(tmp_path, "qemu-m7", "nucleo_f767zi", "int8")


def test_weights_too_large_for_staging_stream_in_slices(mbed: MbedtlsSources,
                                                        tmp_path: Path) -> None:
    # 3x3 convs at 8x8 with 96 -> 96 channels: 82,944 B of weights each, more than a
    # 16 KB staging buffer; without the slices the plan does not fit 64 KB of flash
    layers = [Layer(96), Layer(96), Layer(96)]
    data = conv_chain((1, 8, 8, 96), layers, seed=6, name="slices")
    g = load_model_bytes(data, name="slices")
    board = NUCLEO
    pm = plan_model(g, PlanOptions(board=board), source_bytes=data)
    from nnopt.swap.placement import SwapOptions, plan_swap

    whole = plan_swap(pm.graph, pm.plan, board, SwapOptions(
        mode="force", staging_bytes=16_384, kernel_channel_ranges=False))
    assert not whole.chunks  # no layer fits the staging buffer whole
    sliced = plan_swap(pm.graph, pm.plan, board, SwapOptions(
        mode="force", staging_bytes=16_384, kernel_channel_ranges=True))
    assert sliced.enabled and len(sliced.chunks) > len(layers)
    from dataclasses import replace

    pm = replace(pm, plan=replace(pm.plan, swap=sliced,
                                  weights=sliced.weights_with_pools(pm.plan.weights)))
    from nnopt.runner import run_planned

    ins = random_inputs(data, 3)
    ref, _ = run_tflm(data, ins)
    res = run_planned(pm, [x.tobytes() for x in ins], target="host",
                      workdir=tmp_path / "run", swap_key=bytes(range(32)))
    assert res.outputs[0] == ref[0].tobytes()


def test_cli_feature_maps_option(tmp_path: Path) -> None:
    src = tmp_path / "bands_int8.tflite"
    src.write_bytes(_model("int8"))
    base = [sys.executable, "-m", "nnopt", "optimize", str(src), "--board", "nucleo_f767zi",
            "--sram", str(SRAM["int8"]), "--tiling", "off", "--inplace-ops", "off",
            "--table", "none"]
    res = subprocess.run([*base, "--feature-maps", "auto", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert "ops in row bands" in res.stdout and "predicted slowdown" in res.stdout
    assert "erase cycles per block per inference" in res.stdout and "mJ per inference" in res.stdout
    plan = json.loads((tmp_path / "out" / "bands_int8_plan.json").read_text())
    assert plan["bands"] and plan["stored"]
    assert plan["swap"]["feature_maps"]["tensors"]
    assert "bands_int8_fm_attach" in (tmp_path / "out" / "bands_int8_model.h").read_text()
    # nnopt run: the tile store over a file, the output TFLM's
    ins = random_inputs(_model("int8"), 3)
    (tmp_path / "in.bin").write_bytes(ins[0].tobytes())
    run = [sys.executable, "-m", "nnopt", "run", str(src), *base[5:-2], "--feature-maps",
           "auto", "-i", str(tmp_path / "in.bin"), "-o", str(tmp_path / "out.bin")]
    res = subprocess.run(run, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    ref, _ = run_tflm(_model("int8"), ins)
    assert (tmp_path / "out.bin").read_bytes() == ref[0].tobytes()
    res = subprocess.run(base, capture_output=True, text=True, check=False)  # off: refused
    assert res.returncode == 2 and "ops in row bands" not in res.stdout
    res = subprocess.run([*base, "--feature-maps", "auto", "--allocator", "dynamic"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 64 and "static allocator" in res.stderr and "hint" in res.stderr


def test_model_blob_refuses_several_arenas(tmp_path: Path) -> None:
    # activations over SRAM + DTCM (two arenas): the blob's loader runs one arena
    skips = [Layer(48), Layer(48), Layer(48, skip_from=0), Layer(48, skip_from=-1),
             Layer(32, stride=2), Layer(16)]
    src = tmp_path / "skip48.tflite"
    src.write_bytes(conv_chain((1, 48, 48, 48), skips, seed=1, name="skip48"))
    res = subprocess.run([sys.executable, "-m", "nnopt", "optimize", str(src), "--board",
                          "nucleo_f767zi", "--emit", "blob", "-o", str(tmp_path / "out"),
                          "--table", "none"], capture_output=True, text=True, check=False)
    assert res.returncode == 1, res.stderr
    assert "2 RAM regions (the arena region, dtcm)" in res.stderr
    assert "hint: emit C instead (--emit c" in res.stderr
    assert not list((tmp_path / "out").glob("*.nnmb"))


@pytest.mark.skipif(importlib.util.find_spec("ai_edge_litert") is None,
                    reason="ai-edge-litert (LiteRT, the face detector's oracle) not installed")
def test_face_detector_in_row_bands_bit_exact_with_litert(mbed: MbedtlsSources,
                                                          tmp_path: Path) -> None:
    # MediaPipe's short-range face detector: 1.3 MB of float32 activations within the
    # F767's 384 KB SRAM; convolutions, depthwise, max pool, ADD, RELU and PAD in bands
    data = model_path("realworld/mp_face_detection_short_range.tflite").read_bytes()
    g = load_model_bytes(data, name="face")
    pm = plan_model(g, PlanOptions(board=NUCLEO, order="file", feature_maps="auto"),
                    source_bytes=data)
    p = pm.plan
    assert p.peak_live_bytes > 1_300_000 and p.arena_bytes <= NUCLEO.sram_bytes
    banded = {pm.graph.op_by_index[st.ops[0]].opcode for st in p.bands}
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "RELU", "PAD"} <= banded
    exe = build_fm_model(pm, tmp_path / "gen", "host", None)
    ins = random_inputs(data, 2)
    ref = run_litert(data, ins)[0]
    r = run_fm_model(exe, "host", None, tmp_path, ins, outputs=len(ref))
    assert r.exit_code == 0, r.text
    assert r.outputs == [x.tobytes() for x in ref]
