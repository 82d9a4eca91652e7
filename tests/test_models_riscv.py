"""Generated code as RV32IMAC firmware under QEMU (qemu-system-riscv32): bit-exact with
the tflite-micro interpreter, every op's output (trace), on a representative set of
models: int8 anchors, float LeNet-5 (soft float: no FPU), LSTMs, depthwise-heavy
networks; on qemu_riscv32 (QEMU virt) and on hifive1 (QEMU sifive_e, the FE310's 16 KB
of DTIM: Unlu's LeNet-5 deployment), linked within the board's budget.

RISC-V takes the runtime's portable C kernels: the Arm paths are guarded by
__ARM_FEATURE_DSP / __ARM_FEATURE_SAT / __thumb2__ / __ARM_FP (kernels/internal/simd.h,
dot_f32.h, nnrt_dot_s8.c)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import model_path
from nnopt.boards import load_board
from support.model_checks import run_on_qemu

pytestmark = [
    pytest.mark.qemu,
    pytest.mark.skipif(shutil.which("qemu-system-riscv32") is None,
                       reason="qemu-system-riscv32 not installed "
                       "(apt-get install qemu-system-misc)"),
    pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                       reason="riscv64-unknown-elf-gcc not installed (apt-get install "
                       "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)"),
]


def _run(rel: str, board_name: str, tmp: Path) -> int:
    """Run ``rel`` on ``board_name`` and compare every op's output; returns the
    instructions per inference."""
    return run_on_qemu(model_path(rel).read_bytes(), Path(rel).stem, load_board(board_name),
                       "qemu", tmp)


@pytest.mark.parametrize("rel", [
    "mlperf_tiny/kws_ref_model.tflite",          # int8 anchor: conv + depthwise + FC
    "mlperf_tiny/ad01_int8.tflite",              # int8 anchor: FC stack
    "tflm/hello_world_float.tflite",             # float FC
    "keras/lenet5_float.tflite",                 # float conv, pool, FC, softmax (expf)
    "keras/lenet5_int8.tflite",
    "trained_lstm.tflite",                       # float LSTM (logistic, tanh)
    "trained_lstm_int8.tflite",                  # int8 LSTM
    pytest.param("keras/mobilenet_v3_small_075_96.tflite",  # depthwise, hard-swish, SE
                 marks=pytest.mark.slow),
], ids=lambda r: Path(r).stem)
def test_model_on_qemu_riscv32(rel: str, tmp_path: Path) -> None:
    _run(rel, "qemu_riscv32", tmp_path)


def test_lenet5_float_on_hifive1(tmp_path: Path) -> None:
    """Unlu's deployment: float LeNet-5 within the FE310's 16 KB of data RAM."""
    _run("keras/lenet5_float.tflite", "hifive1", tmp_path)
