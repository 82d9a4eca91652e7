"""A graph input that lives in storage (issue 39): when a banded op reads a graph input
too large to stay in RAM beside its bands, the plan stores it as sealed row chunks
written by the application (``stored`` entry ``"written_by": "application"``); the
generated ``<name>_input_write()`` seals each row chunk as the bytes arrive (nnrt's
``nnrt_fmstore_input_write``), ``input(i)`` is NULL, and the first layer reads its input
in row bands like any stored map. Output bit-exact with the tflite-micro interpreter on
the host and QEMU M7; a flipped bit in an input tile and a stale input tile (an earlier
inference's, replayed) stop the inference with NNRT_ERR_AUTH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap.fmap import plan_traffic
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.testing.big_models import Layer, conv_chain
from nnopt.testing.fm_model import build_fm_model, run_fm_model
from nnopt.testing.harness import random_inputs, run_tflm

NUCLEO = load_board("nucleo_f767zi")
LAYERS = [Layer(16), Layer(16, stride=2), Layer(16, skip_from=1), Layer(8),
          Layer(8, stride=2)]
SRAM = 14_000  # the 27,648-byte input alone is twice that


def _model() -> bytes:
    return conv_chain((1, 48, 48, 12), LAYERS, dtype="int8", seed=5, name="stored_in")


def _planned() -> PlannedModel:
    data = _model()
    return plan_model(load_model_bytes(data, name="stored_in"),
                      PlanOptions(board=NUCLEO, sram=SRAM, feature_maps="auto"),
                      source_bytes=data)


def test_plan_stores_the_graph_input() -> None:
    pm = _planned()
    p = pm.plan
    x = pm.graph.inputs[0]
    assert pm.graph.tensors[x].nbytes > SRAM and p.arena_bytes <= SRAM
    (m,) = [m for m in p.stored if m.tensor == x]
    assert m.written_by == "application" and m.first_tile == 0 and not m.put_after
    assert all(e.written_by == "" for e in p.stored if e.tensor != x)
    assert p.bands[0].tiles[0].tensor == x and p.bands[0].tiles[0].kind == "gather"
    d = json.loads(json.dumps(p.to_json()))
    assert [e.get("written_by") for e in d["stored"]].count("application") == 1
    assert sum("written_by" in e for e in d["stored"]) == 1  # omitted when an op writes it
    assert Plan.from_json(d).stored == p.stored
    fm = plan_traffic(pm.graph, p, NUCLEO)  # the application's writes are counted
    assert fm.written_bytes == sum(e.chunk_bytes * (e.chunks - 1) + e.last_bytes
                                   + 16 * e.chunks for e in p.stored)


def _check(tmp: Path, target: Target, board_name: str | None) -> None:
    board = load_board(board_name) if board_name else None
    pm = _planned()
    exe = build_fm_model(pm, tmp / "gen", target, board)
    src = (tmp / "gen" / "stored_in_model.c").read_text()
    assert "nnrt_fmstore_input_write" in src and "nnrt_fmstore_input_done" in src
    data = _model()
    ins = random_inputs(data, 7)
    ref, _ = run_tflm(data, ins)
    r = run_fm_model(exe, target, board, tmp, ins)
    assert r.exit_code == 0, r.text
    assert r.output == ref[0].tobytes()
    fm = plan_traffic(pm.graph, pm.plan, NUCLEO)
    assert (r.written_bytes, r.read_bytes) == (fm.written_bytes, fm.read_bytes)
    tiles = sum(m.chunks for m in pm.plan.stored)
    # two inferences in a row, each writing its input afresh: both exact
    r = run_fm_model(exe, target, board, tmp, ins, ["-n", "2"])
    assert r.exit_code == 0 and r.writes == 2 * tiles, r.text
    # a flipped bit in the input's first tile; inference 2's first input tile replaced
    # by inference 1's (stale): NNRT_ERR_AUTH (-4), exit 5
    for extra in (["-x", "0"], ["-x", "5"], ["-n", "2", "-R", str(tiles), "0"]):
        r = run_fm_model(exe, target, board, tmp, ins, extra)
        assert r.exit_code == 5 and "status -4" in r.text, (extra, r.text)


def test_host_bit_exact_and_tampered_input_refused(mbed: MbedtlsSources,
                                                   tmp_path: Path) -> None:
    _check(tmp_path, "host", None)


@pytest.mark.qemu
def test_qemu_m7_bit_exact_and_tampered_input_refused(mbed: MbedtlsSources,
                                                      tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check(tmp_path, "qemu-m7", "nucleo_f767zi")
