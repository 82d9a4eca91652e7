"""The planning pipeline and its contract (the JSON fields other tools rely on)."""

from __future__ import annotations

import json

import pytest

from conftest import model_path
from nnopt.boards import load_board
from nnopt.errors import BudgetError, PlanError
from nnopt.frontend.tflite import load_model
from nnopt.memory_budget import check_budget
from nnopt.passes.arena import verify_offsets
from nnopt.passes.lifetimes import Buffer
from nnopt.plan import Plan
from nnopt.planner import PlanOptions, plan_model

NOK = PlanOptions(check_kernels=False)


def test_json_contract_fields() -> None:
    g = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    d = plan_model(g, NOK).plan.to_json()
    for key in ("schedule", "peak_live_bytes", "peak_live_bytes_file_order",
                "lower_bound_bytes", "arena_bytes", "optimal", "buffers"):
        assert key in d
    assert sorted(d["schedule"]) == list(range(31))
    assert d["peak_live_bytes"] == d["peak_live_bytes_file_order"] == 55_296
    assert d["lower_bound_bytes"] == 55_296 and d["optimal"] is True
    for b in d["buffers"]:
        assert {"tensor", "offset", "size", "first", "last"} <= set(b)
        assert 0 <= b["first"] <= b["last"] < 31
    # the RESHAPE output aliases its input: same offset, alias_of set
    aliased = [b for b in d["buffers"] if "alias_of" in b]
    assert aliased
    by_tensor = {b["tensor"]: b for b in d["buffers"]}
    for b in aliased:
        assert b["offset"] == by_tensor[b["alias_of"]]["offset"]
    json.dumps(d)  # serialisable


def test_plan_roundtrip() -> None:
    g = load_model(model_path("keras/swiftnet_like.tflite"))
    plan = plan_model(g, NOK).plan
    again = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert again == plan


def test_planned_buffers_never_overlap() -> None:
    g = load_model(model_path("keras/swiftnet_like.tflite"))
    plan = plan_model(g, NOK).plan
    bufs = [Buffer(f"t{b.tensor}", b.tensor, b.size, b.first, b.last)
            for b in plan.buffers if b.alias_of is None]
    bufs += [Buffer(f"s{s.op}", None, s.size, s.position, s.position) for s in plan.scratch]
    offsets = {f"t{b.tensor}": b.offset for b in plan.buffers if b.alias_of is None}
    offsets |= {f"s{s.op}": s.offset for s in plan.scratch}
    verify_offsets(bufs, offsets, plan.alignment, plan.arena_bytes)


def test_reordering_reaches_swiftnet_optimum() -> None:
    g = load_model(model_path("keras/swiftnet_like.tflite"))
    plan = plan_model(g, PlanOptions(check_kernels=False, inplace=False)).plan
    assert plan.peak_live_bytes_file_order == 122_880
    assert plan.peak_live_bytes == 114_688 and plan.optimal
    file_plan = plan_model(g, PlanOptions(check_kernels=False, order="file",
                                          inplace=False)).plan
    assert file_plan.peak_live_bytes == 122_880
    assert list(file_plan.schedule) == sorted(file_plan.schedule)


def test_max_pool_fusion_lenet_below_unlu() -> None:
    g = load_model(model_path("keras/lenet5_float.tflite"))
    plan = plan_model(g, NOK).plan
    assert len(plan.fusions) == 2
    assert plan.lower_bound_bytes == 23_520  # conv1 in + out: what no order can beat
    assert plan.arena_bytes < 11_200  # Unlu 2020 reports 11.2 kB for LeNet-5 float
    unfused = plan_model(g, PlanOptions(check_kernels=False, fuse=False)).plan
    assert unfused.arena_bytes >= 23_520
    fused_away = {f.op for f in plan.fusions}
    assert not fused_away & set(plan.schedule)


def test_inplace_elementwise_saves_memory() -> None:
    g = load_model(model_path("keras/densenet121_64.tflite"))
    on = plan_model(g, NOK).plan
    off = plan_model(g, PlanOptions(check_kernels=False, inplace=False)).plan
    assert on.inplace
    assert on.peak_live_bytes < off.peak_live_bytes
    for out, src in on.inplace:
        assert on.buffer_of(out).offset == on.buffer_of(src).offset


def test_budget_error_names_numbers() -> None:
    g = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    plan = plan_model(g, PlanOptions(check_kernels=False, sram=50_000)).plan
    with pytest.raises(BudgetError) as info:
        check_budget(plan)
    msg = info.value.message
    assert "55,296" in msg and "50,000" in msg and "5,296" in msg
    assert info.value.exit_code == 2


def test_board_budget() -> None:
    g = load_model(model_path("tflm/mobilenet_v2_quantized_1x3x224x224.tflite"))
    plan = plan_model(g, PlanOptions(check_kernels=False, inplace=False,
                                     board=load_board("nucleo_f767zi"))).plan
    assert plan.sram_budget_bytes == 393_216
    with pytest.raises(BudgetError, match="nucleo_f767zi"):
        check_budget(plan)


def test_unknown_order() -> None:
    g = load_model(model_path("tflm/hello_world_int8.tflite"))
    with pytest.raises(PlanError, match="order"):
        plan_model(g, PlanOptions(check_kernels=False, order="random"))
