"""Weights on the board's SD card (issue 39): a streamed weight blob larger than the
board's external flash (nucleo_f767zi's 16 MB SPI NOR) goes to the first of its
``weight_storage`` devices that holds it (the SD card on SPI); the swap plan records
the device and its cost model takes that device's read rate and latency; the budget
check holds the blob against that device; blobs that fit the NOR stay there. A
weight-swap run from the SD card is bit-exact with the tflite-micro interpreter (the
semihosting/host file stands for either device). ResNet-50 at full width runs on QEMU
in benchmarks/bench_out_of_core.py (--only bands --model resnet50_int8_224): too slow
for a test."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.errors import BudgetError
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import run_planned
from nnopt.swap.costmodel import CostParams
from nnopt.swap.pipeline import build_defines, plan_swap_for
from nnopt.swap.placement import blob_bytes
from nnopt.testing.big_models import Layer, conv_chain, resnet50
from nnopt.testing.harness import random_inputs, run_tflm
from support.markers import slow_on_qemu

NUCLEO = load_board("nucleo_f767zi")


def _plan(data: bytes, name: str, board=NUCLEO, **opts) -> PlannedModel:  # type: ignore[no-untyped-def]
    g = load_model_bytes(data, name=name)
    return plan_swap_for(plan_model(g, PlanOptions(board=board, **opts), source_bytes=data),
                         board)


@pytest.fixture(scope="module")
def resnet50_plan() -> PlannedModel:
    data = resnet50(224, seed=50, name="resnet50_int8_224")
    return _plan(data, "resnet50_int8_224", feature_maps="auto")


def test_resnet50_weights_go_to_the_sd_card(resnet50_plan: PlannedModel) -> None:
    p = resnet50_plan.plan
    s = p.swap
    assert s is not None and s.enabled
    assert p.weight_bytes > NUCLEO.storage["spi_nor"].size  # beyond the 16 MB NOR
    assert s.device == "sd_card" and s.external_kind == "sd_spi"
    assert NUCLEO.storage["spi_nor"].size < blob_bytes(s) <= NUCLEO.storage["sd_card"].size
    assert s.fits_internal_flash and s.fits_staging
    check_budget(p, NUCLEO)  # fits: RAM, internal flash, the SD card
    assert p.arena_bytes <= NUCLEO.sram_bytes
    assert json.loads(json.dumps(p.to_json()))["swap"]["device"] == "sd_card"
    # the cost model reads the SD card's figures, not the NOR's
    sd = CostParams.for_storage(NUCLEO, "sd_card")
    assert sd.flash_bytes_per_s == NUCLEO.storage["sd_card"].read_bytes_per_s == 3e6
    assert sd.flash_setup_s == NUCLEO.storage["sd_card"].latency_s
    nor_plan = _plan_on_nor(resnet50_plan)
    assert s.cost.overlap_ms > nor_plan.cost.overlap_ms  # a slower device
    defs = build_defines("qemu-m7", NUCLEO, s.device)
    assert defs["NNRT_EXTFLASH_BYTES_PER_S"] == "3000000u"
    assert defs["NNRT_EXTFLASH_SETUP_CYCLES"] == "216000u"  # 1 ms at 216 MHz


def _plan_on_nor(pm: PlannedModel):  # type: ignore[no-untyped-def]
    from nnopt.swap.placement import SwapOptions, plan_swap

    s = pm.plan.swap
    assert s is not None
    return plan_swap(pm.graph, replace(pm.plan, swap=None), NUCLEO, SwapOptions(
        kernel_channel_ranges=True, keep_internal=frozenset(
            op for st in (*pm.plan.stages, *pm.plan.bands) for op in st.ops)))


def test_without_weight_storage_the_nor_overflow_is_refused(
        resnet50_plan: PlannedModel) -> None:
    board = replace(NUCLEO, weight_storage=())
    p = plan_swap_for(replace(resnet50_plan, plan=replace(
        resnet50_plan.plan, swap=None, weights=tuple(
            replace(w, pool="flash") for w in resnet50_plan.plan.weights))), board).plan
    assert p.swap is not None and p.swap.device == ""
    with pytest.raises(BudgetError, match="the external flash of board nucleo_f767zi has "
                       "16,777,216 bytes") as err:
        check_budget(p, board)
    assert "weight_storage" in (err.value.hint or "")


def test_blobs_that_fit_the_nor_stay_there() -> None:
    # 3x3 convs 96 -> 96 at 8x8: 3 MB of weights in all, 1 MB streamed
    data = conv_chain((1, 8, 8, 96), [Layer(96)] * 40, seed=6, name="nor")
    p = _plan(data, "nor").plan
    assert p.swap is not None and p.swap.enabled and p.swap.device == ""
    assert p.swap.external_kind == "spi_nor"
    assert "device" not in p.to_json()["swap"]  # plans on the NOR keep their JSON


def _sd_run(tmp_path: Path, target: Target) -> None:
    # a board whose NOR is too small for this blob: the weights go to the SD card
    small = replace(NUCLEO.storage["spi_nor"], size=65536)
    board = replace(NUCLEO, external_flash={**NUCLEO.external_flash, "size": 65536},
                    storage={**NUCLEO.storage, "spi_nor": small})
    data = conv_chain((1, 8, 8, 96), [Layer(96)] * 30, seed=6, name="sd")
    pm = _plan(data, "sd", board)
    s = pm.plan.swap
    assert s is not None and s.device == "sd_card" and blob_bytes(s) > 65536
    check_budget(pm.plan, board)
    ins = random_inputs(data, 3)
    ref, _ = run_tflm(data, ins)
    res = run_planned(pm, [x.tobytes() for x in ins], target=target, board=board,
                      workdir=tmp_path / "run", swap_key=bytes(range(32)))
    assert res.outputs[0] == ref[0].tobytes()


def test_weights_from_the_sd_card_bit_exact(tmp_path: Path) -> None:
    _sd_run(tmp_path, "host")


@slow_on_qemu
def test_weights_from_the_sd_card_bit_exact_on_qemu_m7(tmp_path: Path) -> None:
    """The firmware built with the SD card's figures for the QEMU port's device model
    (build_defines: 3 MB/s, 1 ms per transfer) reads the blob and matches TFLM."""
    _sd_run(tmp_path, "qemu-m7")


@pytest.mark.slow
def test_refusal_with_tiling_names_the_options_that_work(tmp_path: Path) -> None:
    """vgg_like_f32_64 with tiling and in-place ops on: its layers run on views and
    stream only whole, too large for the staging buffers; the hint names --tiling off
    --inplace-ops off, and with them (and --feature-maps auto) the plan fits."""
    from nnopt.testing.big_models import vgg_layers

    src = tmp_path / "vgg_like_f32_64.tflite"
    src.write_bytes(conv_chain((1, 64, 64, 3), vgg_layers(0.5), dtype="float32", seed=3,
                               name="vgg_like_f32_64"))
    base = [sys.executable, "-m", "nnopt", "optimize", str(src), "--board", "nucleo_f767zi",
            "--feature-maps", "auto", "--table", "none"]
    res = subprocess.run([*base, "-o", str(tmp_path / "on")], capture_output=True,
                         text=True, check=False)
    assert res.returncode == 2, res.stderr
    hint = res.stderr.split("hint:", 1)[1]
    assert "--tiling off --inplace-ops off" in hint and "--swap auto" not in hint
    res = subprocess.run([*base, "--tiling", "off", "--inplace-ops", "off", "-o",
                          str(tmp_path / "off")], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
