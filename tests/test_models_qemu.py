"""Generated code as Cortex-M firmware under QEMU: bit-exact with the tflite-micro
interpreter on every model that fits the board, linked within the board's budget; models
that cannot fit are refused at plan time with numbers, not by the linker."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ALL_MODELS, model_path
from nnopt.boards import load_board
from nnopt.errors import BudgetError
from nnopt.firmware.linker import board_layout, check_firmware_budget, firmware_arena_budget
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.paths import shipped_models_dir
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import build_planned
from support.model_checks import SLOW, run_on_qemu

pytestmark = [
    pytest.mark.qemu,
    pytest.mark.skipif(shutil.which("qemu-system-arm") is None,
                       reason="qemu-system-arm not installed"),
    pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                       reason="arm-none-eabi-gcc not installed"),
]

SHIPPED_DIR = shipped_models_dir()
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
    """Bit-exact on every op; the ELF within the real board's budget, its arena exactly
    the plan's."""
    run_on_qemu(model_path(rel).read_bytes(), Path(rel).stem, load_board(board_name),
                target, tmp)


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


# ---- the other cores (docs/cores.md): the generic `qemu` target, the board's machine ----

#: core -> its board (boards/nnopt/).
CORE_BOARDS = {"m0": "qemu_cortex_m0", "m4": "mps2_an386", "m33": "mps2_an521",
               "m55": "mps3_an547"}
#: What every core runs: int8 CNN anchors that fit, float LeNet, LSTMs (int8 and float),
#: depthwise convolutions (kws_ref_model, micro_speech, mobilenet_v3), the families'
#: recurrent and transformer models. The Cortex-M0's 16 KB / 256 KB take fewer (below).
CORE_MODELS = [
    "tflm/hello_world_float.tflite", "tflm/micro_speech_quantized.tflite",
    "keras/lenet5_float.tflite", "keras/lenet5_int8.tflite",
    "mlperf_tiny/kws_ref_model.tflite", "mlperf_tiny/vww_96_int8.tflite",
    "keras/mobilenet_v3_small_075_96.tflite", "families/kwt_b.tflite",
    "families/crnn_lstm_b.tflite",
]
#: Models of CORE_MODELS and more that fit the nRF51822 (16 KB SRAM, 256 KB flash).
M0_MODELS = [
    "tflm/hello_world_int8.tflite", "tflm/hello_world_float.tflite",
    "tflm/micro_speech_quantized.tflite", "keras/lenet5_int8.tflite",
    "mlperf_tiny/kws_ref_model.tflite", "families/kwt_b.tflite",
    "families/crnn_lstm_b.tflite", "families/gru_imu_b.tflite", "families/conv_ae_b.tflite",
]
#: ... and models that do not: refused with the budget error, never run.
M0_TOO_BIG = {
    "keras/lenet5_float.tflite": "weights need",  # 245,976 B of weights, 256 KB flash
    "mlperf_tiny/ad01_int8.tflite": "weights need",
    "mlperf_tiny/vww_96_int8.tflite": "activation arena",
}
#: Models a core's board cannot hold: refused with the budget error, never run.
CORE_TOO_BIG = {
    # 1,046,787 B of weights; the AN547 image has 512 KB of code memory (ITCM)
    ("mps3_an547", "keras/mobilenet_v3_small_075_96.tflite"): "weights need",
}
#: Shipped models (models/), run on every core: the int8 and float LSTM.
SHIPPED_LSTMS = ["trained_lstm_int8.tflite", "trained_lstm.tflite"]


def _firmware_plan_options(board_name: str) -> PlanOptions:
    """As `nnopt run --target qemu --board B` plans: in-place ops and tiling where they
    pay (the CLI's defaults), for the board's SRAM less the firmware's stack."""
    board = load_board(board_name)
    return PlanOptions(board=board, sram=firmware_arena_budget(board), inplace_ops="auto",
                       tiling="auto")


def _run_core(rel: str, board_name: str, tmp: Path) -> None:
    """As _run, on the generic target, planned as `nnopt run --target qemu` plans (the
    firmware's stack reserved in the arena's region)."""
    data = model_path(rel).read_bytes() if "/" in rel else (SHIPPED_DIR / rel).read_bytes()
    run_on_qemu(data, Path(rel).stem, load_board(board_name), "qemu", tmp,
                options=_firmware_plan_options(board_name), firmware_stack=True,
                arena_exact=False)


def _core_cases() -> list[object]:
    cases: list[object] = []
    for core, board in CORE_BOARDS.items():
        models = M0_MODELS if core == "m0" else CORE_MODELS
        for rel in [*models, *SHIPPED_LSTMS]:
            slow = [pytest.mark.slow] if rel in SLOW or "vww" in rel or "mobilenet" in rel \
                else []
            cases.append(pytest.param(board, rel, marks=slow, id=f"{core}-{Path(rel).stem}"))
    return cases


@pytest.mark.parametrize(("board", "rel"), _core_cases())
def test_model_on_every_core(board: str, rel: str, tmp_path: Path) -> None:
    """Bit-exact with the tflite-micro interpreter, every tensor: the DSP paths on the
    M4 and M55, the portable C of the M33 without DSP (the AN521's CPU0) and of the
    Armv6-M Cortex-M0 (Thumb-1, soft float), hard float on the M4F and M55. A model the
    board cannot hold (CORE_TOO_BIG) is refused with the budget error instead."""
    why = CORE_TOO_BIG.get((board, rel))
    if why is None:
        _run_core(rel, board, tmp_path)
        return
    with pytest.raises(BudgetError, match=why):
        _run_core(rel, board, tmp_path)


@pytest.mark.parametrize("rel", list(M0_TOO_BIG), ids=lambda r: Path(r).stem)
def test_too_big_for_the_cortex_m0_is_refused(rel: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`nnopt run --target qemu` on the 16 KB nRF51822: the budget error, no run."""
    from nnopt.cli import main

    assert main(["run", str(model_path(rel)), "--board", "qemu_cortex_m0",
                 "--target", "qemu", "--seed", "1"]) != 0
    err = capsys.readouterr().err
    assert M0_TOO_BIG[rel] in err and "over by" in err and "qemu_cortex_m0" in err
    assert "building and running" not in err  # refused before any build


def test_firmware_budget_reserves_the_stack() -> None:
    """The 16 KB part keeps its firmware.stack_size out of the arena's budget: an arena
    that fits the region but not beside the stack is refused with both numbers."""
    board = load_board("qemu_cortex_m0")
    assert firmware_arena_budget(board) == 16384 - board_layout(board).stack_size
    g = load_model_bytes(model_path("mlperf_tiny/kws_ref_model.tflite").read_bytes())
    plan = plan_model(g, PlanOptions(board=board, tiling="off")).plan
    assert firmware_arena_budget(board) < plan.sram_bytes <= 16384
    with pytest.raises(BudgetError, match=r"16,384 bytes of sram, 4,096 of them .*over by"):
        check_firmware_budget(plan, board)


@pytest.mark.parametrize(("board", "dsp"), [("mps2_an386", True), ("mps3_an547", True),
                                            ("mps2_an521", False), ("qemu_cortex_m0", False)])
def test_each_core_takes_its_kernel_path(board: str, dsp: bool, tmp_path: Path) -> None:
    """The DSP kernels (SMLAD, SXTB16) are in the firmware of the cores with the
    extension and absent where the core has none (QEMU would fault on them); the
    Cortex-M0 firmware is Thumb-1 (no 32-bit instruction but BL, MRS/MSR, DSB/ISB)."""
    objdump = shutil.which("arm-none-eabi-objdump")
    if objdump is None:
        pytest.skip("arm-none-eabi-objdump not installed")
    data = model_path("mlperf_tiny/kws_ref_model.tflite").read_bytes()
    b = load_board(board)
    pm = plan_model(load_model_bytes(data, name="kws"), _firmware_plan_options(board),
                    source_bytes=data)
    exe = build_planned(pm, "qemu", tmp_path, board=b)
    text = subprocess.run([objdump, "-d", str(exe)], capture_output=True, text=True,
                          check=True).stdout
    mnemonics = {line.split("\t")[2].split()[0] for line in text.splitlines()
                 if line.count("\t") >= 2 and line.split("\t")[2].strip()}
    assert ({"smlad", "sxtb16"} <= mnemonics) == dsp
    assert not (mnemonics & {"smlad", "sxtb16", "sxtab16", "smlabb"}) or dsp
    if b.cpu == "cortex-m0":
        assert not mnemonics & {"sdiv", "udiv", "mla", "mls", "it", "ite", "movw", "movt",
                                "ssat", "usat", "clz", "ldrd", "strd", "smull", "vldm"}
