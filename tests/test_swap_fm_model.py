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
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.testing.big_models import Layer, conv_chain
from nnopt.testing.fm_model import run_fm_model
from support.cases import run_fm_exact

NUCLEO = load_board("nucleo_f767zi")
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


def _check(mbed: MbedtlsSources, tmp: Path, target: Target, board_name: str | None) -> None:
    pm = _planned()
    r, exe, board, ins, ref = run_fm_exact(pm, _model(), tmp, target, board_name)
    n = len(pm.plan.feature_maps)
    assert (r.writes, r.reads) == (n, n), r.text
    # two inferences: every tile written and read once per inference
    r = run_fm_model(exe, target, board, tmp, ins, ["-n", "2"])
    assert r.exit_code == 0 and r.output[-len(ref[0].tobytes()):] == ref[0].tobytes(), r.text
    assert (r.writes, r.reads) == (2 * n, 2 * n), r.text
    # a flipped bit in the first tile written; a stale tile (inference 1's first tile
    # written again in place of inference 2's): NNRT_ERR_AUTH (-4), exit 5, no output
    for extra in (["-x", "0"], ["-n", "2", "-R", str(n), "0"]):
        r = run_fm_model(exe, target, board, tmp, ins, extra)
        assert r.exit_code == 5 and "status -4" in r.text, (extra, r.text)
        if "-n" not in extra:  # the failing inference wrote no output
            assert r.output == b""


def test_host_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    _check(mbed, tmp_path, "host", None)


@pytest.mark.qemu
def test_qemu_m7_bit_exact_and_tampering_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check(mbed, tmp_path, "qemu-m7", "nucleo_f767zi")
