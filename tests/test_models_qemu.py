"""Generated code as Cortex-M firmware under QEMU: bit-exact with the tflite-micro
interpreter on every model that fits the board, linked within the board's budget; models
that cannot fit are refused at plan time with numbers, not by the linker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ALL_MODELS, model_path
from nnopt.boards import load_board
from nnopt.elfcheck import check_elf
from nnopt.errors import BudgetError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import run_planned
from nnopt.testing.harness import random_inputs, run_tflm
from support.cases import compare_trace
from support.model_checks import SLOW

pytestmark = [
    pytest.mark.qemu,
    pytest.mark.skipif(shutil.which("qemu-system-arm") is None,
                       reason="qemu-system-arm not installed"),
    pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                       reason="arm-none-eabi-gcc not installed"),
]

NUCLEO = load_board("nucleo_f767zi")
FLASH = NUCLEO.regions["flash"].size
CODE_RESERVE = 64 * 1024  # runtime code, harness, vectors: generous


def _fits(rel: str) -> bool:
    g = load_model_bytes(model_path(rel).read_bytes())
    plan = plan_model(g, PlanOptions(board=NUCLEO)).plan
    return (plan.arena_bytes <= NUCLEO.sram_bytes
            and plan.weight_bytes + CODE_RESERVE <= FLASH)


FITTING = [rel for rel in ALL_MODELS if _fits(rel)]
NOT_FITTING = [rel for rel in ALL_MODELS if rel not in FITTING]


def _run(rel: str, target: str, board_name: str, tmp: Path) -> None:
    data = model_path(rel).read_bytes()
    board = load_board(board_name)
    graph = load_model_bytes(data, name=Path(rel).stem)
    pm = plan_model(graph, PlanOptions(board=board), source_bytes=data)
    check_budget(pm.plan, board)
    inputs = random_inputs(data, 11)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_planned(pm, [x.tobytes() for x in inputs], target=target,  # type: ignore[arg-type]
                      board=board, trace=True, workdir=tmp)
    compare_trace(pm, res.trace, ref_out, ref_all)
    assert res.instructions is not None and res.instructions > 0

    # The ELF fits the real board's budget and its arena is exactly the plan's.
    assert res.executable is not None
    report = check_elf(res.executable, board)
    assert not report.over_budget
    arena = [s for s in report.symbols if s.name == f"{pm.plan.model}_arena"]
    assert arena and arena[0].size == max(pm.plan.arena_bytes, 16)
    assert arena[0].region == board.arena_region


@pytest.mark.parametrize("rel", [pytest.param(r, marks=[pytest.mark.slow] if r in SLOW else [])
                                 for r in FITTING], ids=lambda r: Path(r).stem)
def test_model_on_cortex_m7(rel: str, tmp_path: Path) -> None:
    _run(rel, "qemu-m7", "nucleo_f767zi", tmp_path)


@pytest.mark.parametrize("rel", ["tflm/hello_world_float.tflite", "keras/lenet5_float.tflite",
                                 "mlperf_tiny/kws_ref_model.tflite",
                                 "keras/mobilenet_v3_small_075_96.tflite"],
                         ids=lambda r: Path(r).stem)
def test_model_on_cortex_m3(rel: str, tmp_path: Path) -> None:
    """No FPU, no DSP extension: nothing in the runtime may assume an M7."""
    _run(rel, "qemu-m3", "mps2_an385", tmp_path)


def test_small_board_budget(tmp_path: Path) -> None:
    _run("mlperf_tiny/kws_ref_model.tflite", "qemu-m3", "qemu_cortex_m3", tmp_path)


@pytest.mark.parametrize("rel", NOT_FITTING, ids=lambda r: Path(r).stem)
def test_too_big_is_refused_at_plan_time(rel: str) -> None:
    g = load_model_bytes(model_path(rel).read_bytes())
    plan = plan_model(g, PlanOptions(board=NUCLEO)).plan
    what = "activation arena" if plan.arena_bytes > NUCLEO.sram_bytes else "weights need"
    with pytest.raises(BudgetError, match=f"{what}.*over by"):
        check_budget(plan, NUCLEO)
