"""Generated code with the defragmenting dynamic allocator (``--allocator dynamic``):
every shared model bit-exact with the tflite-micro interpreter on every intermediate
tensor, on the host (and a subset as Cortex-M7 firmware under QEMU), and the
allocator's measured high-water mark, bytes moved and compactions exactly as
:mod:`nnopt.passes.dynamic` predicted (the arena is sized to the prediction, so a
wrong prediction would also fail the run with NNRT_ERR_NOMEM).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ALL_MODELS, model_path
from nnopt.boards import load_board
from nnopt.codegen.c_model import generate
from nnopt.errors import PlanError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.passes.dynamic import DynArena, aligned_live_peak, dynamic_plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model, with_dynamic
from nnopt.runner import RunOutput, run_planned
from nnopt.testing.harness import random_inputs, run_tflm
from support.cases import assert_outputs_match, compare_trace, output_arrays
from support.markers import needs_qemu
from support.model_checks import SLOW

QEMU_SUBSET = ["keras/swiftnet_like.tflite", "mlperf_tiny/vww_96_int8.tflite",
               "keras/mobilenet_v3_small_075_96.tflite"]


def _check(rel: str, target: str, tmp: Path, *, sanitize: bool = False,
           options: PlanOptions | None = None, allocator: str = "dynamic") -> RunOutput:
    data = model_path(rel).read_bytes()
    graph = load_model_bytes(data, name=Path(rel).stem)
    board = load_board("nucleo_f767zi") if target != "host" else None
    pm = plan_model(graph, options or PlanOptions(board=board), source_bytes=data)
    dyn = dynamic_plan(pm.graph, pm.plan, lazy=allocator == "dynamic-lazy")
    inputs = random_inputs(data, 5)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_planned(pm, [x.tobytes() for x in inputs], target=target,  # type: ignore[arg-type]
                      board=board, trace=True, sanitize=sanitize, workdir=tmp,
                      allocator=allocator)
    g = pm.graph
    compare_trace(pm, res.trace, ref_out, ref_all)
    assert_outputs_match(output_arrays(g, res.outputs), ref_out)
    assert res.allocator_stats == {
        "high_water": dyn.high_water, "capacity": dyn.arena_bytes,
        "bytes_moved": dyn.bytes_moved, "compactions": dyn.compactions}
    assert dyn.arena_bytes == aligned_live_peak(pm.plan) <= pm.plan.arena_bytes
    if allocator == "dynamic":
        assert dyn.high_water == dyn.arena_bytes
    return res


def _params() -> list[object]:
    return [pytest.param(rel, marks=[pytest.mark.slow] if rel in SLOW else [],
                         id=Path(rel).stem) for rel in ALL_MODELS]


@pytest.mark.parametrize("rel", _params())
def test_model_dynamic_bit_exact_on_host(rel: str, tmp_path: Path) -> None:
    _check(rel, "host", tmp_path)


def test_dynamic_under_sanitizers(tmp_path: Path) -> None:
    """ASan/UBSan: no handle is dereferenced after its block moved or was freed."""
    _check("keras/swiftnet_like.tflite", "host", tmp_path, sanitize=True)


@pytest.mark.parametrize("rel", ["keras/swiftnet_like.tflite", "mlperf_tiny/vww_96_int8.tflite",
                                 "keras/mobilenet_v2_035_96.tflite"],
                         ids=lambda r: Path(r).stem)
def test_lazy_compaction_bit_exact_and_moves_less(rel: str, tmp_path: Path) -> None:
    _check(rel, "host", tmp_path, sanitize="swiftnet" in rel, allocator="dynamic-lazy")
    pm = _planned(rel)
    eager, lazy = dynamic_plan(pm.graph, pm.plan), dynamic_plan(pm.graph, pm.plan, lazy=True)
    assert lazy.arena_bytes == eager.arena_bytes
    assert lazy.bytes_moved < eager.bytes_moved


def test_dynamic_with_file_order_and_no_inplace(tmp_path: Path) -> None:
    _check("keras/swiftnet_like.tflite", "host", tmp_path,
           options=PlanOptions(order="file", fuse=False, inplace=False))


@needs_qemu
@pytest.mark.qemu
@pytest.mark.parametrize("rel", QEMU_SUBSET, ids=lambda r: Path(r).stem)
def test_model_dynamic_on_cortex_m7(rel: str, tmp_path: Path) -> None:
    res = _check(rel, "qemu-m7", tmp_path)
    assert res.instructions is not None and res.instructions > 0


@needs_qemu
@pytest.mark.qemu
def test_small_model_dynamic_on_cortex_m7(tmp_path: Path) -> None:
    _check("mlperf_tiny/kws_ref_model.tflite", "qemu-m7", tmp_path)


def _planned(rel: str) -> PlannedModel:
    data = model_path(rel).read_bytes()
    return plan_model(load_model_bytes(data, name=Path(rel).stem), source_bytes=data)


def test_static_mode_unchanged(tmp_path: Path) -> None:
    """allocator="static" is the default and emits no allocator code."""
    pm = _planned("keras/swiftnet_like.tflite")
    a = generate(pm, tmp_path / "a").c_file.read_text()
    b = generate(pm, tmp_path / "b", allocator="static").c_file.read_text()
    assert a == b
    assert "nnrt_dyn" not in a
    with pytest.raises(PlanError, match="carries no dynamic plan for the dynamic allocator"):
        generate(pm, tmp_path / "d", allocator="dynamic")  # codegen computes no plan
    d = generate(with_dynamic(pm), tmp_path / "d", allocator="dynamic").c_file.read_text()
    assert "nnrt_dyn_compact" in d and "_arena + " not in d
    with pytest.raises(PlanError, match="no dynamic plan for the dynamic-lazy allocator"):
        generate(with_dynamic(pm), tmp_path / "l", allocator="dynamic-lazy")


def test_prediction_replays_on_the_model_allocator() -> None:
    """The predicted events, replayed on an allocator of exactly the predicted size,
    never fail and never need an implicit compaction."""
    pm = _planned("keras/swiftnet_like.tflite")
    dyn = dynamic_plan(pm.graph, pm.plan)
    arena = DynArena(len(dyn.blocks), dyn.arena_bytes)
    for h in dyn.prologue:
        assert arena.alloc(h, dyn.blocks[h].size) == 0
    for step in dyn.steps:
        for h in step.alloc:
            assert arena.alloc(h, dyn.blocks[h].size) == 0
        assert arena.top == step.top_bytes
        for h in step.free:
            assert arena.free(h) == 0
        if step.free:
            assert arena.compact() == step.moved_bytes
        assert arena.top == arena.live_bytes
    assert arena.bytes_moved == dyn.bytes_moved
    assert arena.high_water == dyn.arena_bytes
    # Outputs still allocated after the last step.
    assert all(arena.offset[dyn.handle_of[t]] is not None for t in pm.graph.outputs)


def test_no_fragmentation_where_offsets_fragment() -> None:
    """Same schedule, TFLM's greedy-by-size offsets: the static arena fragments
    (vww_96_int8: 73,728 B for a 55,296 B live peak); the dynamic allocator needs the
    aligned live peak."""
    data = model_path("mlperf_tiny/vww_96_int8.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data),
                    PlanOptions(arena_strategies=("greedy_by_size",)))
    dyn = dynamic_plan(pm.graph, pm.plan)
    assert dyn.arena_bytes == aligned_live_peak(pm.plan)
    assert pm.plan.arena_bytes > dyn.arena_bytes


def test_dynamic_arena_never_exceeds_the_static_plan() -> None:
    for rel in ALL_MODELS:
        if rel in SLOW:
            continue
        pm = _planned(rel)
        dyn = dynamic_plan(pm.graph, pm.plan)
        assert dyn.arena_bytes == aligned_live_peak(pm.plan) <= pm.plan.arena_bytes, rel
        assert dyn.arena_bytes >= pm.plan.peak_live_bytes


def test_cli_reports_and_runs_dynamic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from nnopt.cli import main

    model = str(model_path("mlperf_tiny/vww_96_int8.tflite"))
    pm = _planned("mlperf_tiny/vww_96_int8.tflite")
    dyn = dynamic_plan(pm.graph, pm.plan)
    assert main(["optimize", model, "--allocator", "dynamic", "--table", "none",
                 "--json", str(tmp_path / "r.json"), "-o", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert f"dynamic allocator:  arena {dyn.arena_bytes:,} bytes" in text
    assert f"{dyn.bytes_moved:,} bytes moved per inference" in text
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["allocator"] == "dynamic"
    assert report["dynamic"]["arena_bytes"] == dyn.arena_bytes == aligned_live_peak(pm.plan)
    assert report["dynamic"]["bytes_moved"] == dyn.bytes_moved
    c = (tmp_path / "out" / "vww_96_int8_model.c").read_text()
    assert "nnrt_dyn_compact(&vww_96_int8_heap)" in c
    assert main(["run", model, "--allocator", "dynamic", "--seed", "1",
                 "--output", str(tmp_path / "dyn.bin"), "--stats", str(tmp_path / "s.json")]) == 0
    assert main(["run", model, "--seed", "1", "--output", str(tmp_path / "static.bin")]) == 0
    assert (tmp_path / "dyn.bin").read_bytes() == (tmp_path / "static.bin").read_bytes()
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["allocator"] == "dynamic" and stats["bytes_moved"] == dyn.bytes_moved
    assert main(["optimize", model, "--allocator", "dynamic-lazy", "--table", "none"]) == 0
    lazy = dynamic_plan(pm.graph, pm.plan, lazy=True)
    assert f"{lazy.bytes_moved:,} bytes moved per inference" in capsys.readouterr().out


def test_static_only_plans_are_refused() -> None:
    """In-place window ops, partial overlaps and tiled stages place buffers over each
    other; the dynamic allocator moves whole tensors, so it refuses such plans."""
    from nnopt.errors import PlanError

    data = model_path("mlperf_tiny/vww_96_int8.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data), PlanOptions(inplace_ops="auto", tiling="auto"))
    assert pm.plan.inplace_ops or pm.plan.stages
    with pytest.raises(PlanError, match="whole tensors"):
        dynamic_plan(pm.graph, pm.plan)
