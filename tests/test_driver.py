"""The compile driver (nnopt.driver): a request in, a result out, the same files as
``nnopt optimize``; nothing written before the write step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import model_path
from nnopt import driver
from nnopt.cli import main
from nnopt.errors import BudgetError, NnoptError
from nnopt.passes import dynamic
from nnopt.planner import PlanOptions
from nnopt.swap.provision import KeyStoreError

KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"


def _without_timing(d: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in d.items() if k != "planning_seconds"}


def test_compile_model_writes_what_nnopt_optimize_writes(tmp_path: Path) -> None:
    model = model_path("keras/lenet5_int8.tflite")
    req = driver.CompileRequest(model, PlanOptions(inplace_ops="auto", tiling="auto"),
                                out_dir=tmp_path / "lib", emit=("c", "blob"))
    res = driver.compile_model(req)
    assert res.budget_error is None
    w = res.written
    assert w.generated is not None and w.generated.blob is None  # nothing streams
    assert w.generated.sources.c_file == tmp_path / "lib" / "lenet5_int8_model.c"
    assert w.model_blob is not None and w.model_blob.path.stat().st_size == w.model_blob.bytes
    assert w.reports == (tmp_path / "lib" / "lenet5_int8_report.json",)
    assert w.plots == (tmp_path / "lib" / "lenet5_int8_memory.png",)
    assert w.report["specialized_ops"] == list(w.generated.sources.specialized)

    assert main(["optimize", str(model), "-o", str(tmp_path / "cli"), "--emit", "c",
                 "--emit", "blob", "--table", "none"]) == 0
    for name in ("lenet5_int8_model.c", "lenet5_int8_model.h", "lenet5_int8.nnmb"):
        assert (tmp_path / "lib" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    for name in ("lenet5_int8_plan.json", "lenet5_int8_report.json"):
        lib = json.loads((tmp_path / "lib" / name).read_text())
        cli = json.loads((tmp_path / "cli" / name).read_text())
        assert _without_timing(lib) == _without_timing(cli)


@pytest.mark.parametrize("allocator", ["static", "dynamic", "dynamic-lazy"])
def test_the_dynamic_plan_is_computed_once_per_plan(
        allocator: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dynamic allocator's plan is computed once (driver.plan, or for the static
    allocator's model blob), recorded in the planned model's facts, and read by codegen,
    the blob writer and the report: counted where every computation starts (the model
    of the C allocator each one runs)."""
    runs: list[int] = []

    class CountingArena(dynamic.DynArena):
        def __init__(self, n_handles: int, capacity: int | None = None,
                     align: int = 16) -> None:
            runs.append(n_handles)
            super().__init__(n_handles, capacity, align)

    monkeypatch.setattr(dynamic, "DynArena", CountingArena)
    req = driver.CompileRequest(model_path("keras/lenet5_int8.tflite"), allocator=allocator,
                                out_dir=tmp_path, emit=("c", "blob"))
    res = driver.compile_model(req)
    assert len(runs) == 1
    dyn = res.compiled.planned.facts.dynamic
    assert res.compiled.dynamic is dyn
    blob = res.written.model_blob
    assert blob is not None and blob.bytes > 0
    code = (tmp_path / "lenet5_int8_model.c").read_text()
    if allocator == "static":
        assert dyn is None and "nnrt_dyn" not in code
        assert "dynamic" not in res.written.report
    else:
        assert dyn is not None and dyn.lazy == (allocator == "dynamic-lazy")
        assert blob.arena_bytes == dyn.arena_bytes == res.compiled.arena_bytes
        assert res.written.report["dynamic"] == dyn.to_json()
        assert "nnrt_dyn_alloc" in code


def test_plan_is_pure_and_over_budget_is_a_verdict(tmp_path: Path) -> None:
    model = model_path("keras/lenet5_int8.tflite")
    req = driver.CompileRequest(model, PlanOptions(sram=1000), out_dir=tmp_path / "out")
    compiled = driver.plan(req)
    assert not (tmp_path / "out").exists()  # planning writes nothing
    err = compiled.budget_error()
    assert isinstance(err, BudgetError) and err.exit_code == 2
    assert f"{compiled.arena_bytes:,} bytes" in err.message
    # an over-budget plan is still written (nnopt optimize writes, then exits 2)
    res = driver.compile_model(req)
    assert isinstance(res.budget_error, BudgetError)
    assert res.written.plan_json is not None and res.written.plan_json.is_file()


def test_emit_without_an_output_directory_is_refused() -> None:
    req = driver.CompileRequest(model_path("keras/lenet5_int8.tflite"), emit=("blob",))
    with pytest.raises(NnoptError, match="--emit needs an output directory"):
        driver.write(driver.plan(req))


def test_key_id_without_a_key_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNOPT_SWAP_KEY", raising=False)
    monkeypatch.delenv("NNOPT_SWAP_KEY_FILE", raising=False)
    req = driver.CompileRequest(model_path("keras/lenet5_int8.tflite"), swap="force",
                                key=driver.SwapKey(key_id=0x10), out_dir=tmp_path / "out")
    with pytest.raises(KeyStoreError, match="no key is configured"):
        driver.plan(req)
    assert not (tmp_path / "out").exists()


def test_streamed_weights_generate_sources_and_blob(tmp_path: Path) -> None:
    req = driver.CompileRequest(model_path("keras/lenet5_int8.tflite"), swap="force",
                                key=driver.SwapKey(hex=KEY), out_dir=tmp_path)
    res = driver.compile_model(req)
    plan = res.compiled.planned.plan
    assert plan.swap is not None and plan.swap.enabled and plan.swap.chunk_count > 0
    gen = res.written.generated
    assert gen is not None and gen.blob == tmp_path / "lenet5_int8_swap.bin"
    assert res.written.new_key is None  # the configured key sealed it
    # the run's key policy: the configured key
    assert driver.run_key(res.compiled) == bytes.fromhex(KEY)


def test_the_model_blob_plan_is_planned_and_said(tmp_path: Path) -> None:
    """With --emit blob, driver.plan makes the plan the blob carries: this plan when it
    uses nothing nnrt's loader does not run, else a second plan with in-place ops and
    tiling off, named in the progress (issue 43: no hidden work at write time)."""
    said: list[str] = []
    auto = PlanOptions(inplace_ops="auto", tiling="auto")  # nnopt optimize's defaults
    inplace = driver.plan(driver.CompileRequest(
        model_path("tflm/micro_speech_quantized.tflite"), auto, out_dir=tmp_path,
        emit=("blob",)), progress=said.append)
    plan = inplace.planned.plan
    assert plan.inplace_ops or plan.overlaps or plan.stages  # what the loader cannot run
    assert inplace.blob_replanned and inplace.blob_planned is not None
    blob_plan = inplace.blob_planned.plan
    assert not (blob_plan.inplace_ops or blob_plan.overlaps or blob_plan.stages)
    assert any("planning the model blob again" in s for s in said)
    said.clear()
    model = model_path("keras/lenet5_int8.tflite")
    classic = driver.plan(driver.CompileRequest(model, auto, out_dir=tmp_path,
                                                emit=("blob",)), progress=said.append)
    assert not classic.blob_replanned and classic.blob_planned is not None
    assert classic.blob_planned.plan is classic.planned.plan
    assert not any("model blob" in s for s in said)
    without = driver.plan(driver.CompileRequest(model, out_dir=tmp_path, emit=("c",)))
    assert without.blob_planned is None
    with pytest.raises(NnoptError, match="no plan for the model blob"):
        driver.write(driver.Compiled(without.request.__class__(
            model, out_dir=tmp_path, emit=("blob",)), without.loaded, without.planned, None))
