"""ONNX models in: the importer's graphs run by nnopt's generated code (host) against
onnxruntime, float32 within 1e-4 x max(1, max|ref|), int8 QDQ within quantisation steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import MODELS
from nnopt.frontend.onnx import internal_layout
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error, output_steps, qdq_steps, run_onnxruntime
from support import onnx_models

ONNX_DIR = MODELS / "onnx"
FLOAT_MODELS = ["lenet5_b", "mlp_ae_b", "mobilenetish_b", "resnetish_b", "unetish_b"]


def _inputs(model: bytes, seed: int) -> list[np.ndarray]:
    g = load_model_bytes(model)
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(g.tensors[t].shape).astype(np.float32) for t in g.inputs]


def _check_float(model: bytes, seed: int = 0) -> float:
    xs = _inputs(model, seed)
    refs = run_onnxruntime(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(refs)
    worst = 0.0
    for g, r in zip(got, refs, strict=True):
        assert g.shape == r.shape and g.dtype == r.dtype
        worst = max(worst, float_error(g, r))
    assert worst <= 1e-4, worst
    return worst


@pytest.mark.parametrize("build", [onnx_models.cnn_model, onnx_models.lenet_like_model,
                                   onnx_models.sequence_model, onnx_models.decoder_model,
                                   onnx_models.gather_model],
                         ids=["cnn", "lenet_like", "sequence", "decoder", "gather"])
def test_helper_built_models_match_onnxruntime(build) -> None:  # type: ignore[no-untyped-def]
    _check_float(build())


def test_io_keeps_onnx_layout_and_nhwc_inside() -> None:
    g = load_model_bytes(onnx_models.cnn_model())
    assert g.tensors[g.inputs[0]].shape == (1, 3, 16, 16)  # NCHW in
    assert g.tensors[g.outputs[0]].shape == (1, 10)
    convs = [op for op in g.ops if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    assert g.tensors[convs[0].outputs[0]].shape == (1, 8, 8, 8)  # NHWC inside
    assert g.ops[0].opcode == "TRANSPOSE"
    assert "NHWC inside" in internal_layout(g)
    # BatchNormalization folded into the conv, ReLU fused, no BN/Identity op left
    assert convs[0].options.activation == "RELU"  # type: ignore[union-attr]
    codes = [op.opcode for op in g.ops]
    assert codes.count("MUL") == 1 and codes.count("ADD") == 1  # the model's own Mul and Add
    assert "RELU" not in codes and "RELU6" not in codes


def test_lenet_flatten_folds_into_the_gemm_weights() -> None:
    g = load_model_bytes(onnx_models.lenet_like_model())
    # a single-channel NCHW input is already NHWC: a RESHAPE, no TRANSPOSE anywhere
    assert "TRANSPOSE" not in [op.opcode for op in g.ops]


@pytest.mark.parametrize("name", FLOAT_MODELS)
def test_shared_float_models_match_onnxruntime(name: str) -> None:
    path = ONNX_DIR / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared models are not here)")
    _check_float(path.read_bytes(), seed=1)


@pytest.mark.parametrize("name", FLOAT_MODELS)
def test_shared_qdq_models_within_quantisation_steps(name: str) -> None:
    path = ONNX_DIR / f"{name}_qdq.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared models are not here)")
    model = path.read_bytes()
    g = load_model_bytes(model)
    int8_ops = [op for op in g.ops if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D",
                                                    "FULLY_CONNECTED")]
    assert int8_ops and all(g.tensors[op.inputs[0]].dtype.name == "INT8" for op in int8_ops)
    steps = output_steps(model)
    errs = []
    for seed in range(10):  # LeNet has 10 outputs: judge the rate over 100 elements
        xs = _inputs(model, seed)
        refs = run_onnxruntime(model, xs)
        got, _ = run_nnopt(model, xs)
        for gt, r, s in zip(got, refs, steps, strict=True):
            assert s is not None and gt.dtype == r.dtype == np.float32
            errs.append(qdq_steps(gt, r, s))
    e = np.concatenate(errs)
    assert np.mean(e <= 0.5 + 1e-4) >= 0.9, np.mean(e <= 0.5 + 1e-4)
    assert e.max() <= 2 + 1e-4, e.max()


def test_weights_stay_constant_in_flash(tmp_path: Path) -> None:
    g = load_model_bytes(onnx_models.cnn_model())
    assert g.weight_bytes > 8 * 3 * 3 * 3 * 4


def test_pt2e_style_qdq_runs_int8_with_fused_relu() -> None:
    model = onnx_models.pt2e_qdq_model()
    g = load_model_bytes(model)
    convs = [op for op in g.ops if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    assert [op.options.activation for op in convs] == ["RELU", "RELU6"]  # type: ignore[union-attr]
    assert all(g.tensors[op.outputs[0]].dtype.name == "INT8" for op in convs)
    assert "RELU" not in [op.opcode for op in g.ops]
    fc = next(op for op in g.ops if op.opcode == "FULLY_CONNECTED")
    w = g.tensors[fc.inputs[1]]
    assert w.dtype.name == "INT8" and w.quant is not None and w.quant.per_channel
    step = output_steps(model)[0]
    assert step is not None
    errs = []
    for seed in range(5):
        xs = _inputs(model, seed)
        got, _ = run_nnopt(model, xs)
        errs.append(qdq_steps(got[0], run_onnxruntime(model, xs)[0], step))
    e = np.concatenate(errs)
    assert np.mean(e <= 0.5 + 1e-4) >= 0.9 and e.max() <= 2 + 1e-4


def test_issue14_ops_map_to_their_builtins_and_match_onnxruntime() -> None:
    model = onnx_models.issue14_ops_model()
    ops = {op.opcode for op in load_model_bytes(model).ops}
    assert {"REDUCE_MAX", "REDUCE_MIN", "SUM", "PRELU", "ELU", "LOG_SOFTMAX", "FLOOR", "CEIL",
            "ROUND", "SIN", "COS"} <= ops
    _check_float(model)


def test_pad_wrap_reflect_edge_match_onnxruntime() -> None:
    model = onnx_models.pad_modes_model()
    ops = [op.opcode for op in load_model_bytes(model).ops]
    assert "SLICE" in ops and "CONCATENATION" in ops  # built from slices, as TFLM runs
    assert "MIRROR_PAD" in ops  # reflect: TFLite's own operator
    _check_float(model)
