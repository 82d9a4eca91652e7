"""Every shared model, end to end on the host: bit-exact with the tflite-micro
interpreter on every intermediate tensor (float models: 1e-5 relative), several inputs.

Comparing only the final output would hide wrong kernels behind a saturated softmax;
the first tensor that differs names the op that broke.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ALL_MODELS, model_path
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import Graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm

# Models too large for the host-time budget of the default test run are marked slow.
# The unrolled RNNs (480 and 540 ops) plan twice (views and copies) and build 500-op C.
SLOW = {"tflm/mobilenet_v2_quantized_1x3x224x224.tflite", "keras/densenet121_64.tflite",
        "families/crnn_lstm_b.tflite", "families/gru_imu_b.tflite"}
SANITIZED = ["tflm/hello_world_int8.tflite", "mlperf_tiny/kws_ref_model.tflite",
             "keras/lenet5_float.tflite", "keras/swiftnet_like.tflite",
             "keras/mobilenet_v3_small_075_96.tflite"]


def compare(graph: Graph, ours: dict[int, np.ndarray], ref: dict[int, np.ndarray],
            order: list[int]) -> None:
    """Assert equality tensor by tensor in execution order; name the first mismatch."""
    compared = 0
    for op_index in order:
        op = graph.op_by_index[op_index]
        for t in op.outputs:
            if t not in ours or t not in ref:
                continue
            a, b = ours[t], ref[t].reshape(ours[t].shape)
            compared += 1
            if a.dtype == np.float32:
                ok = np.allclose(a, b, rtol=1e-5, atol=1e-6)
            else:
                ok = np.array_equal(a, b)
            if not ok:
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                pytest.fail(f"op {op.index} ({op.opcode}) output tensor {t} "
                            f"({graph.tensors[t].name}) differs: max |diff| {diff.max()}, "
                            f"{int((diff > 0).sum())} of {a.size} elements")
    assert compared >= 1


def _params() -> list[object]:
    out = []
    for rel in ALL_MODELS:
        marks = [pytest.mark.slow] if rel in SLOW else []
        out.append(pytest.param(rel, marks=marks, id=rel.split("/")[-1].removesuffix(".tflite")))
    return out


@pytest.mark.parametrize("rel", _params())
def test_model_bit_exact_on_host(rel: str) -> None:
    data = model_path(rel).read_bytes()
    graph = load_model_bytes(data)
    for seed in (0, 1):
        inputs = random_inputs(data, seed)
        ref_out, ref_all = run_tflm(data, inputs)
        outs, trace = run_nnopt(data, inputs)
        ref_all.update({t: o for t, o in zip(graph.outputs, ref_out, strict=True)})
        order = [op.index for op in graph.ops]
        compare(graph, trace, ref_all, order)
        for o, r in zip(outs, ref_out, strict=True):
            if o.dtype == np.float32:
                np.testing.assert_allclose(o, r.reshape(o.shape), rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(o, r.reshape(o.shape))


@pytest.mark.parametrize("rel", [
    "keras/nasnet_mobile_64.tflite",
    pytest.param("keras/densenet121_64.tflite", marks=[pytest.mark.slow]),
], ids=lambda r: r.split("/")[-1].removesuffix(".tflite"))
def test_default_plan_bit_exact_on_host(rel: str) -> None:
    """The commands' default plan (in-place operators and tiling auto) of the large
    branched graphs issue 18 plans incrementally: bit-exact on every tensor."""
    data = model_path(rel).read_bytes()
    graph = load_model_bytes(data)
    inputs = random_inputs(data, 2)
    ref_out, ref_all = run_tflm(data, inputs)
    outs, trace = run_nnopt(data, inputs, options=PlanOptions(inplace_ops="auto",
                                                              tiling="auto"))
    ref_all.update({t: o for t, o in zip(graph.outputs, ref_out, strict=True)})
    compare(graph, trace, ref_all, [op.index for op in graph.ops])
    for o, r in zip(outs, ref_out, strict=True):
        np.testing.assert_array_equal(o, r.reshape(o.shape))


@pytest.mark.parametrize("rel", SANITIZED, ids=lambda r: r.split("/")[-1])
def test_model_under_sanitizers(rel: str) -> None:
    data = model_path(rel).read_bytes()
    inputs = random_inputs(data, 7)
    ref_out, _ = run_tflm(data, inputs)
    outs, _ = run_nnopt(data, inputs, sanitize=True)
    for o, r in zip(outs, ref_out, strict=True):
        if o.dtype == np.float32:
            np.testing.assert_allclose(o, r.reshape(o.shape), rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(o, r.reshape(o.shape))


@pytest.mark.parametrize("options", [
    PlanOptions(order="file", fuse=False, inplace=False),
    PlanOptions(arena_strategies=("greedy_by_size",)),
    PlanOptions(arena_strategies=("two_ended",)),
], ids=["file-order-no-opt", "greedy-by-size", "two-ended"])
def test_any_plan_runs_bit_exact(options: PlanOptions) -> None:
    """Whatever plan the tool can make runs and gives the same answer."""
    data = model_path("keras/swiftnet_like.tflite").read_bytes()
    inputs = random_inputs(data, 3)
    ref_out, _ = run_tflm(data, inputs)
    outs, _ = run_nnopt(data, inputs, options=options)
    np.testing.assert_array_equal(outs[0], ref_out[0].reshape(outs[0].shape))
