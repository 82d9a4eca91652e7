"""Issue 24 (ONNX): LSTM/GRU/RNN, If/Loop resolved at build time (--input-value),
Clip with computed bounds and MatMul of activations, on small models built with
``onnx.helper``, run by nnopt's generated code (host) against onnxruntime with graph
optimisations off (float32: within 1e-4 x max(1, max|ref|)). onnxruntime takes no
layout=1 recurrent op, so those are checked against ``onnx.reference``."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.onnx import parse_input_values
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error, run_onnxruntime
from support import onnx_recurrent

TOL = 1e-4


def _reference(model: bytes, xs: list[np.ndarray], layout: int) -> list[np.ndarray]:
    if layout == 0:
        return run_onnxruntime(model, xs)
    names = [i.name for i in onnx.load_from_string(model).graph.input]
    return [np.asarray(y) for y in ReferenceEvaluator(model).run(None, dict(
        zip(names, xs, strict=True)))]


CASES = [("LSTM", "forward", 0, 0), ("LSTM", "reverse", 0, 0),
         ("LSTM", "bidirectional", 0, 0), ("LSTM", "bidirectional", 1, 0),
         ("GRU", "forward", 0, 0), ("GRU", "reverse", 0, 1),
         ("GRU", "bidirectional", 0, 1), ("GRU", "forward", 1, 1),
         ("RNN", "forward", 0, 0), ("RNN", "bidirectional", 0, 0)]


@pytest.mark.parametrize(("op", "direction", "layout", "lbr"), CASES,
                         ids=[f"{o}-{d}-layout{la}-lbr{b}" for o, d, la, b in CASES])
def test_recurrent_ops_with_state_inputs_and_outputs(op: str, direction: str, layout: int,
                                                     lbr: int) -> None:
    model = onnx_recurrent.recurrent_model(op, direction, layout=layout,
                                           linear_before_reset=lbr)
    g = load_model_bytes(model)
    n_state = 2 if op == "LSTM" else 1
    assert len(g.inputs) == 1 + n_state and len(g.outputs) == 1 + n_state  # states in/out
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(g.tensors[t].shape).astype(np.float32) for t in g.inputs]
    refs = _reference(model, xs, layout)
    got, _ = run_nnopt(model, xs)
    for a, r in zip(got, refs, strict=True):
        assert a.shape == r.shape
        assert float_error(a, r) <= TOL
    assert np.abs(refs[1]).max() > 0.1  # the final state is not trivially zero


def test_recurrent_without_initial_state_takes_zeros() -> None:
    model = onnx_recurrent.recurrent_model("GRU", "forward", state_inputs=False,
                                           linear_before_reset=1)
    x = np.random.default_rng(4).standard_normal((5, 2, 6)).astype(np.float32)
    got, _ = run_nnopt(model, [x])
    for a, r in zip(got, run_onnxruntime(model, [x]), strict=True):
        assert float_error(a, r) <= TOL


@pytest.mark.parametrize(("attrs", "named"), [
    ({"clip": 3.0}, "clip"),
    ({"activations": ["Relu", "Tanh", "Tanh"]}, "activations"),
    ({"input_forget": 1}, "input_forget"),
])
def test_unsupported_lstm_attributes_are_refused_by_name(attrs: dict[str, object],
                                                         named: str) -> None:
    model = onnx_recurrent.recurrent_model("LSTM", **attrs)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedError) as err:
        load_model_bytes(model)
    assert named in err.value.message and "LSTM node 'LSTM_0'" in err.value.message
    assert err.value.hint and "default activations" in err.value.hint


def test_if_and_loop_resolve_at_build_time_with_a_pinned_input() -> None:
    model = onnx_recurrent.if_loop_model()
    x = np.random.default_rng(5).standard_normal((1, 8)).astype(np.float32)
    for mode, last in ((1, "RELU"), (0, "NEG")):
        g = load_model_bytes(model, input_values={"mode": (mode,)})
        codes = [op.opcode for op in g.ops]
        assert [g.tensors[t].name for t in g.inputs] == ["x"]  # 'mode' is no input now
        assert codes[-1] == last and codes.count("ADD") == 3  # 3 iterations unrolled
        refs = run_onnxruntime(model, [x, np.array(mode, np.int64)])
        got, _ = run_nnopt(model, [x], input_values={"mode": (mode,)})
        for a, r in zip(got, refs, strict=True):
            assert a.shape == r.shape and float_error(a, r) <= TOL


def test_if_on_an_unpinned_input_is_refused_with_the_hint() -> None:
    with pytest.raises(NnoptError) as err:
        load_model_bytes(onnx_recurrent.if_loop_model())
    # 'mode' is int64: the If on it stays dynamic, named with how to pin it
    assert "If node 'If_mode'" in err.value.message
    assert err.value.hint and "--input-value" in err.value.hint


@pytest.mark.parametrize(("spec", "why"), [("mode", "NAME=V1"), ("mode=a", "NAME=V1"),
                                           ("=3", "NAME=V1")])
def test_bad_input_value_specs_are_refused(spec: str, why: str) -> None:
    with pytest.raises(NnoptError) as err:
        parse_input_values([spec])
    assert why in err.value.message and err.value.hint


def test_input_value_naming_no_input_or_wrong_count_is_refused() -> None:
    model = onnx_recurrent.if_loop_model()
    with pytest.raises(NnoptError, match="not an input"):
        load_model_bytes(model, input_values={"rate": (1,)})
    with pytest.raises(NnoptError, match="2 values"):
        load_model_bytes(model, input_values={"mode": (1, 2)})
    with pytest.raises(NnoptError, match="not integers"):
        load_model_bytes(model, input_values={"mode": (1.5,)})


def test_loop_with_a_computed_condition_is_refused() -> None:
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "lim"], ["c_out"]),
         helper.make_node("Identity", ["v_in"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", onnx.TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("c_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", onnx.TensorProto.FLOAT, [4])],
        [onnx.numpy_helper.from_array(np.array(1.0, np.float32), "lim")])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "t", "x"], ["y"], name="Loop_w", body=body)], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
        [onnx.numpy_helper.from_array(np.array(4, np.int64), "n"),
         onnx.numpy_helper.from_array(np.array(True), "t")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with pytest.raises(UnsupportedError, match="Loop node 'Loop_w': its condition"):
        load_model_bytes(m.SerializeToString())


def test_computed_clip_bounds_and_matmul_of_activations() -> None:
    model = onnx_recurrent.computed_clip_model()
    g = load_model_bytes(model)
    codes = [op.opcode for op in g.ops]
    assert codes.count("BATCH_MATMUL") == 2 and "MAXIMUM" in codes and "MINIMUM" in codes
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal(g.tensors[t].shape).astype(np.float32) for t in g.inputs]
    refs = run_onnxruntime(model, xs)
    got, _ = run_nnopt(model, xs)
    for a, r in zip(got, refs, strict=True):
        assert a.shape == r.shape and float_error(a, r) <= TOL


def test_a_sequence_too_long_to_unroll_is_refused() -> None:
    model = onnx_recurrent.recurrent_model("RNN", "bidirectional", seq=513, batch=1,
                                           size=2, hidden=2)
    with pytest.raises(UnsupportedError, match="513 time steps x 2 direction") as err:
        load_model_bytes(model)
    assert err.value.hint and "state carried" in err.value.hint
