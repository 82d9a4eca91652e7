"""Activations over every RAM region (issue 39, nnopt.passes.region_place): a model whose
activations exceed nucleo_f767zi's SRAM but fit SRAM + DTCM plans two arenas, runs
bit-exact with no external traffic (host and QEMU M7), and models that fit one region
keep their plans."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.codegen.c_model import generate
from nnopt.elfcheck import check_elf
from nnopt.errors import BudgetError, PlanError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.passes.lifetimes import Buffer
from nnopt.passes.region_place import RegionCapacity, place_regions
from nnopt.plan import Plan
from nnopt.planner import (
    REGION_RESERVE_BYTES,
    PlannedModel,
    PlanOptions,
    plan_model,
    with_dynamic,
)
from nnopt.runner import run_planned
from nnopt.testing.big_models import Layer, conv_chain
from nnopt.testing.harness import random_inputs, run_tflm

NUCLEO = load_board("nucleo_f767zi")
# 110,592-byte feature maps, four live at once (two skip connections): 442,368 bytes,
# more than the 393,216 of SRAM, less than SRAM + DTCM
LAYERS = [Layer(48), Layer(48), Layer(48, skip_from=0), Layer(48, skip_from=-1),
          Layer(32, stride=2), Layer(16)]


def _model() -> bytes:
    return conv_chain((1, 48, 48, 48), LAYERS, seed=1, name="two_region")


def _planned(board_name: str = "nucleo_f767zi") -> PlannedModel:
    data = _model()
    return plan_model(load_model_bytes(data, name="two_region"),
                      PlanOptions(board=load_board(board_name)), source_bytes=data)


def _buf(key: str, size: int, first: int, last: int) -> Buffer:
    return Buffer(key, int(key[1:]), size, first, last)


def test_place_regions_relieves_the_peak_and_respects_capacities() -> None:
    bufs = [_buf("t0", 100, 0, 3), _buf("t1", 100, 0, 1), _buf("t2", 100, 1, 3),
            _buf("t3", 100, 2, 3)]
    rp = place_regions(bufs, [RegionCapacity("fast", 112, 2e9), RegionCapacity("home", 224, 1e9)],
                       "home", align=16)
    assert rp is not None
    assert rp.bytes_of("fast") <= 112 and rp.bytes_of("home") <= 224
    assert sorted(rp.region_of.values()).count("fast") == 1
    # nothing fits: None (the caller keeps its plan and the budget check refuses it)
    assert place_regions(bufs, [RegionCapacity("fast", 64, 2e9),
                                RegionCapacity("home", 224, 1e9)], "home") is None


def test_two_arenas_on_nucleo_f767zi(tmp_path: Path) -> None:
    pm = _planned()
    p = pm.plan
    assert p.peak_live_bytes > NUCLEO.sram_bytes  # one arena cannot fit
    assert set(p.arenas) == {"dtcm"}
    assert p.arena_bytes <= NUCLEO.sram_bytes
    assert p.arenas["dtcm"] <= NUCLEO.regions["dtcm"].size - REGION_RESERVE_BYTES
    check_budget(p, NUCLEO)  # fits: no BudgetError
    assert {b.region for b in p.buffers} == {"", "dtcm"}
    # per region: no two buffers live at once overlap
    for region in ("", "dtcm"):
        roots = [b for b in p.buffers if b.region == region and b.alias_of is None]
        for i, a in enumerate(roots):
            for b in roots[i + 1:]:
                if a.first <= b.last and b.first <= a.last:
                    assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset
    # the JSON carries the regions and reads back
    d = json.loads(json.dumps(p.to_json()))
    assert d["arenas"] == p.arenas
    assert any(b.get("region") == "dtcm" for b in d["buffers"])
    assert json.loads(json.dumps(Plan.from_json(d).to_json())) == d
    # one arena per region in the C: the DTCM one in NNRT_DTCM
    generate(pm, tmp_path)
    c = (tmp_path / "two_region_model.c").read_text()
    assert f"NNRT_DTCM static uint8_t two_region_arena_dtcm[{p.arenas['dtcm']}];" in c
    assert f"NNRT_ARENA static uint8_t two_region_arena[{p.arena_bytes}];" in c
    with pytest.raises(PlanError, match="one arena"):
        generate(with_dynamic(pm), tmp_path / "dyn", allocator="dynamic")


def test_one_region_board_still_refuses() -> None:
    """mps2_an385 declares no activation regions: the same plan as before (one arena),
    refused against a small --sram budget as before."""
    data = _model()
    g = load_model_bytes(data, name="two_region")
    p = plan_model(g, PlanOptions(board=NUCLEO, sram=NUCLEO.sram_bytes)).plan
    assert not p.arenas  # an explicit --sram budget: one region
    with pytest.raises(BudgetError, match="activation arena needs"):
        check_budget(p, NUCLEO)


def test_two_arenas_bit_exact_on_host() -> None:
    pm = _planned()
    data = _model()
    ins = random_inputs(data, 3)
    ref, _ref_all = run_tflm(data, ins)
    res = run_planned(pm, [x.tobytes() for x in ins], target="host", board=NUCLEO)
    assert res.outputs[0] == ref[0].tobytes()
    assert np.unique(ref[0]).size > 50  # the outputs spread (not saturated)


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm not installed")
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed")
def test_two_arenas_bit_exact_on_qemu_m7(tmp_path: Path) -> None:
    """On the emulated nucleo_f767zi (mps2-an500): linked within SRAM and DTCM, each
    arena in its region, outputs and every intermediate bit-exact with TFLM."""
    from support.cases import compare_trace

    pm = _planned()
    data = _model()
    ins = random_inputs(data, 5)
    ref, ref_all = run_tflm(data, ins)
    res = run_planned(pm, [x.tobytes() for x in ins], target="qemu-m7", board=NUCLEO,
                      trace=True, workdir=tmp_path)
    compare_trace(pm, res.trace, ref, ref_all)
    assert res.executable is not None
    report = check_elf(res.executable, NUCLEO)
    assert not report.over_budget
    syms = {s.name: s for s in report.symbols}
    assert syms["two_region_arena"].region == "sram"
    assert syms["two_region_arena_dtcm"].region == "dtcm"
    assert syms["two_region_arena_dtcm"].size == pm.plan.arenas["dtcm"]
