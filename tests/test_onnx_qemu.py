"""The shared PyTorch/ONNX models (float and int8 QDQ) as Cortex-M7 firmware on QEMU:
bit-exact with the host build; LeNet-5 float32 plans to at most 11,200 B with its
weights in flash (Unlu 2020's figure; the example in examples/pytorch_lenet5)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from conftest import MODELS
from nnopt.boards import load_board
from nnopt.frontend.tflite import load_model_bytes
from nnopt.planner import PlanOptions, plan_model
from nnopt.testing.harness import run_nnopt

MODELS_ONNX = [f"{n}{q}" for n in ("lenet5_b", "mlp_ae_b", "mobilenetish_b", "resnetish_b",
                                   "unetish_b") for q in ("", "_qdq")]


def _model(name: str) -> bytes:
    path = MODELS / "onnx" / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared models are not here)")
    return path.read_bytes()


def test_lenet5_float_plans_within_unlu_sram() -> None:
    model = _model("lenet5_b")
    pm = plan_model(load_model_bytes(model), PlanOptions(board=load_board("nucleo_f767zi")),
                    source_bytes=model)
    assert pm.plan.arena_bytes <= 11_200, pm.plan.arena_bytes
    assert pm.graph.weight_bytes > 240_000  # all weights constant (flash), none in the arena


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm missing")
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc missing")
@pytest.mark.parametrize("name", MODELS_ONNX)
def test_onnx_models_on_cortex_m7_bit_exact_with_host(name: str) -> None:
    model = _model(name)
    g = load_model_bytes(model)
    xs = [np.random.default_rng(5).standard_normal(g.tensors[t].shape).astype(np.float32)
          for t in g.inputs]
    board = load_board("nucleo_f767zi")
    host, _ = run_nnopt(model, xs, options=PlanOptions(board=board))
    m7, _ = run_nnopt(model, xs, target="qemu-m7", board=board)
    assert [h.tobytes() for h in host] == [m.tobytes() for m in m7]
