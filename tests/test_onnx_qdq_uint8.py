"""uint8 QDQ activations (issue 44): models quantised by onnxruntime's
``quantize_static`` with ``QuantType.QUInt8`` activations (its older releases' default)
run on nnopt's int8 kernels with the zero point shifted by 128
(:mod:`nnopt.frontend.onnx.uint8`), within the QDQ tolerance of onnxruntime with graph
optimisations off (:mod:`nnopt.testing.onnx_oracle`: at least 90 % of the output
elements within half a quantisation step, all within 2); uint8 model inputs and outputs
stay uint8."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from conftest import MODELS
from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error, output_steps, qdq_steps, run_onnxruntime
from support import onnx_models
from support.markers import needs_qemu

BUILDERS = {"cnn": onnx_models.cnn_model, "lenet_like": onnx_models.lenet_like_model,
            "sequence": onnx_models.sequence_model, "decoder": onnx_models.decoder_model}


def _float_inputs(model: bytes, seed: int) -> list[np.ndarray]:
    g = load_model_bytes(model)
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(g.tensors[t].shape).astype(np.float32) for t in g.inputs]


def _assert_within_steps(model: bytes, seeds: int = 5) -> None:
    steps = output_steps(model)
    errs = []
    for seed in range(seeds):
        xs = _float_inputs(model, seed)
        refs = run_onnxruntime(model, xs)
        got, _ = run_nnopt(model, xs)
        for a, r, s in zip(got, refs, steps, strict=True):
            assert a.dtype == r.dtype and a.shape == r.shape
            if s is None:  # an output the quantiser left in float32
                assert float_error(a, r) <= 1e-4
                continue
            errs.append(qdq_steps(a, r, s))
    e = np.concatenate(errs)
    assert np.mean(e <= 0.5 + 1e-4) >= 0.9, np.mean(e <= 0.5 + 1e-4)
    assert e.max() <= 2 + 1e-4, e.max()


def _zero_point_types(model: bytes) -> set[int]:
    m = onnx.load_model_from_string(model)
    return {t.data_type for t in m.graph.initializer if t.name.endswith("zero_point")}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_uint8_activations_run_int8_kernels_within_steps(name: str) -> None:
    model = onnx_models.quantize_static_default(BUILDERS[name]())
    assert onnx.TensorProto.UINT8 in _zero_point_types(model)
    g = load_model_bytes(model)
    heavy = [op for op in g.ops if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D",
                                                 "FULLY_CONNECTED")]
    int8 = [op for op in heavy if g.tensors[op.inputs[0]].dtype.name == "INT8"]
    assert int8 and 2 * len(int8) > len(heavy)  # lenet_like: its scaled Gemm in float32
    assert not any(t.dtype.name == "UINT8" for t in g.tensors)  # float32 boundary
    _assert_within_steps(model)


@pytest.mark.parametrize("name", ["cnn", "decoder"])
def test_uint8_weights_run_in_float_within_steps(name: str) -> None:
    """uint8 weights are asymmetric (no int8 kernel takes a weight zero point): those
    ops run in float32 on the dequantized weights, the ONNX semantics."""
    model = onnx_models.quantize_static_default(BUILDERS[name](), weights_uint8=True)
    _assert_within_steps(model)


@pytest.mark.parametrize("name", ["lenet5_b", "mobilenetish_b"])
def test_shared_models_quantised_uint8_within_steps(name: str) -> None:
    path = MODELS / "onnx" / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared models are not here)")
    _assert_within_steps(onnx_models.quantize_static_default(path.read_bytes()), seeds=3)


def _boundary_model() -> bytes:
    return onnx_models.uint8_boundary(onnx_models.quantize_static_default(
        onnx_models.sequence_model()))


def _uint8_inputs(g_bytes: bytes, seed: int) -> list[np.ndarray]:
    g = load_model_bytes(g_bytes)
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, g.tensors[t].shape).astype(np.uint8) for t in g.inputs]


def test_uint8_inputs_and_outputs_stay_uint8() -> None:
    model = _boundary_model()
    g = load_model_bytes(model)
    assert [g.tensors[t].dtype.name for t in g.inputs] == ["UINT8"]
    assert [g.tensors[t].dtype.name for t in g.outputs] == ["FLOAT32", "UINT8"]
    seen = 0
    for seed in range(4):
        xs = _uint8_inputs(model, seed)
        refs = run_onnxruntime(model, xs)
        got, _ = run_nnopt(model, xs)
        assert [a.dtype for a in got] == [r.dtype for r in refs]
        np.testing.assert_allclose(got[0], refs[0], atol=1e-6)
        diff = np.abs(got[1].astype(np.int32) - refs[1].astype(np.int32))
        assert diff.max() <= 1 and np.mean(diff == 0) >= 0.9
        seen += int(np.ptp(refs[1]))
    assert seen > 0


@pytest.mark.qemu
@needs_qemu
def test_uint8_models_on_cortex_m7_bit_exact_with_host() -> None:
    from nnopt.boards import load_board
    from nnopt.planner import PlanOptions

    board = load_board("nucleo_f767zi")
    for model, uint8_in in ((_boundary_model(), True),
                            (onnx_models.quantize_static_default(onnx_models.cnn_model()),
                             False)):
        inputs = _uint8_inputs(model, 9) if uint8_in else _float_inputs(model, 9)
        host, _ = run_nnopt(model, inputs, options=PlanOptions(board=board))
        m7, _ = run_nnopt(model, inputs, target="qemu-m7", board=board)
        assert [h.tobytes() for h in host] == [m.tobytes() for m in m7]


def test_uint8_input_read_by_another_node_refused_by_name() -> None:
    m = onnx.load_model_from_string(_boundary_model())
    g = m.graph
    relu = onnx.helper.make_node("Relu", [g.input[0].name], ["extra"], name="extra_relu")
    g.node.insert(0, relu)
    g.output.append(onnx.helper.make_tensor_value_info("extra", onnx.TensorProto.UINT8,
                                                       [1, 2, 20]))
    with pytest.raises(UnsupportedError, match="uint8 input 'input' is read by Relu"):
        load_model_bytes(m.SerializeToString())


@pytest.mark.parametrize("seed", range(30))
def test_mutated_uint8_model_fails_cleanly_or_loads(seed: int) -> None:
    from support.mutation import mutate

    _, data = mutate(_boundary_model(), seed)
    try:
        g = load_model_bytes(data)
    except NnoptError:
        return
    assert g.outputs
