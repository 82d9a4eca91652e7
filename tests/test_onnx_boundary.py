"""ONNX int64 and float64 values at the model boundary (issue 44): an int64 / float64
input is an input of the generated code of that type, narrowed on entry by a checked
CAST (int32 / float32 inside; a value that does not fit fails the invocation with
NNRT_ERR_ARG), an output is cast back to the type the model declares; integer Add/Mul
with int64 constants run in int32; Gather at indices computed at run time is TFLite's
GATHER (an index outside the axis fails the invocation); Cast between the held types;
a dilated MaxPool whose stride the dilation divides runs over one phase of its input.
Within 1e-4 x max(1, max|ref|) of onnxruntime (optimisations off); the refusals name
the problem with a hint; mutated models fail cleanly or load.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnopt.errors import NnoptError, ToolchainError, UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error, run_onnxruntime
from support.mutation import mutate

pytest.importorskip("onnxruntime")


def _model(nodes: list[onnx.NodeProto], inputs: list[tuple[str, int, list[int]]],
           outputs: list[tuple[str, int, list[int]]], inits: list[onnx.TensorProto],
           opset: int = 17) -> bytes:
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return bytes(m.SerializeToString())


def boundary_model() -> bytes:
    """ids (int64) -> Gather rows of a float table, ids * 3 + 7 (int64 out), Cast of the
    ids to float added to the gathered rows; x (float64) + c (float64 out)."""
    rng = np.random.default_rng(44)
    inits = [numpy_helper.from_array(rng.standard_normal((10, 4)).astype(np.float32), "table"),
             numpy_helper.from_array(np.array(3, np.int64), "three"),
             numpy_helper.from_array(np.array([7, -7, 0, 1, 2, 3], np.int64), "seven"),
             numpy_helper.from_array(rng.standard_normal((5,)), "c64")]
    nodes = [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0),
             helper.make_node("Mul", ["ids", "three"], ["m"]),
             helper.make_node("Add", ["m", "seven"], ["ints"]),
             helper.make_node("Cast", ["ids"], ["idsf"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["idsf", "ax"], ["idsf2"]),
             helper.make_node("Add", ["rows", "idsf2"], ["emb"]),
             helper.make_node("Add", ["x", "c64"], ["y"])]
    inits.append(numpy_helper.from_array(np.array([2], np.int64), "ax"))
    return _model(nodes, [("ids", TensorProto.INT64, [1, 6]), ("x", TensorProto.DOUBLE, [3, 5])],
                  [("emb", TensorProto.FLOAT, [1, 6, 4]), ("ints", TensorProto.INT64, [1, 6]),
                   ("y", TensorProto.DOUBLE, [3, 5])], inits)


BOUNDARY = boundary_model()


def _inputs(ids: list[int], scale: float = 1.0) -> list[np.ndarray]:
    x = np.random.default_rng(3).standard_normal((3, 5)) * scale
    return [np.array([ids], np.int64), x]


def test_int64_and_float64_inputs_and_outputs_match_onnxruntime() -> None:
    g = load_model_bytes(BOUNDARY)
    assert [g.tensors[t].dtype.name for t in g.inputs] == ["INT64", "FLOAT64"]
    assert [g.tensors[t].dtype.name for t in g.outputs] == ["FLOAT32", "INT64", "FLOAT64"]
    for ids in ([0, 9, 3, 3, 5, 1], [9, 8, 7, 6, 5, 4]):
        xs = _inputs(ids, 1e3)
        refs = run_onnxruntime(BOUNDARY, xs)
        got, _ = run_nnopt(BOUNDARY, xs)
        for a, r in zip(got, refs, strict=True):
            assert a.shape == r.shape and a.dtype == r.dtype
            assert float_error(a, r) <= 1e-4
        np.testing.assert_array_equal(got[1], refs[1])  # integers: exact


@pytest.mark.parametrize("ids, why", [
    ([0, 1, 2, 3, 4, 10], "an index past the table's 10 rows"),
    ([0, 1, 2, 3, 4, -1], "a negative index (ONNX's from-the-end form is not wrapped)"),
    ([0, 1, 2, 3, 4, 2**31], "an int64 value int32 cannot hold"),
])
def test_values_the_kernels_cannot_take_fail_the_invocation(ids: list[int], why: str) -> None:
    with pytest.raises(ToolchainError, match="NNRT_ERR_ARG"):
        run_nnopt(BOUNDARY, _inputs(ids))


def test_a_float64_input_float32_cannot_hold_fails_the_invocation() -> None:
    xs = _inputs([0, 1, 2, 3, 4, 5])
    xs[1][1, 2] = 1e39
    with pytest.raises(ToolchainError, match="NNRT_ERR_ARG"):
        run_nnopt(BOUNDARY, xs)
    xs[1][1, 2] = np.inf  # the infinities pass the boundary (as float32's)
    got, _ = run_nnopt(BOUNDARY, xs)
    # ... and TFLM's float ADD clamps its result to [-FLT_MAX, FLT_MAX] (activation NONE)
    assert got[2][1, 2] == float(np.finfo(np.float32).max)


def test_an_int64_constant_outside_int32_is_refused_with_a_hint() -> None:
    m = _model([helper.make_node("Add", ["a", "big"], ["b"])],
               [("a", TensorProto.INT64, [4])], [("b", TensorProto.INT64, [4])],
               [numpy_helper.from_array(np.array([1, 2, 3, 2**40], np.int64), "big")])
    with pytest.raises(UnsupportedError, match="outside int32") as err:
        load_model_bytes(m)
    assert err.value.hint and "int32's range" in err.value.hint


def test_an_unsupported_input_type_is_refused_with_a_hint() -> None:
    m = _model([helper.make_node("Identity", ["a"], ["b"])],
               [("a", TensorProto.INT16, [4])], [("b", TensorProto.INT16, [4])], [])
    with pytest.raises(UnsupportedError, match="input 'a' is int16") as err:
        load_model_bytes(m)
    assert err.value.hint and "int64" in err.value.hint


def test_a_refusal_behind_an_int64_input_suggests_pinning_it() -> None:
    m = _model([helper.make_node("Cast", ["sr"], ["f"], to=TensorProto.FLOAT16),
                helper.make_node("Cast", ["f"], ["g"], to=TensorProto.FLOAT),
                helper.make_node("Mul", ["x", "g"], ["y"])],
               [("x", TensorProto.FLOAT, [4]), ("sr", TensorProto.INT64, [])],
               [("y", TensorProto.FLOAT, [4])], [])
    with pytest.raises(UnsupportedError, match="cast to ONNX type 10") as err:
        load_model_bytes(m)
    assert err.value.hint and "--input-value sr=V" in err.value.hint


# ----- dilated MaxPool -----

def _maxpool(shape: list[int], **attrs: object) -> bytes:
    out = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(_model(
        [helper.make_node("MaxPool", ["x"], ["y"], **attrs)],
        [("x", TensorProto.FLOAT, shape)], [("y", TensorProto.FLOAT, None)], [])))  # type: ignore[list-item]
    return bytes(out.SerializeToString())


@pytest.mark.parametrize("shape, attrs", [
    ([1, 3, 20, 17], {"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [2, 3],
                      "pads": [2, 1, 1, 1]}),
    ([1, 2, 16, 15], {"kernel_shape": [2, 2], "dilations": [2, 2], "strides": [4, 2],
                      "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ([1, 2, 41], {"kernel_shape": [4], "dilations": [3], "strides": [3], "pads": [3, 2]}),
])
def test_dilated_maxpool_matches_onnxruntime(shape: list[int], attrs: dict[str, object]
                                             ) -> None:
    m = _maxpool(shape, **attrs)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    ref = run_onnxruntime(m, [x])[0]
    got, _ = run_nnopt(m, [x])
    assert got[0].shape == ref.shape
    np.testing.assert_array_equal(got[0], ref)  # maxima: exact


def test_dilation_that_does_not_divide_the_stride_is_refused_with_a_hint() -> None:
    m = _maxpool([1, 1, 12, 12], kernel_shape=[2, 2], dilations=[2, 2], strides=[1, 1])
    with pytest.raises(UnsupportedError, match=r"dilations \[2, 2\] with strides") as err:
        load_model_bytes(m)
    assert err.value.hint and "divide the strides" in err.value.hint


# ----- malformed models -----

@pytest.mark.parametrize("seed", range(40))
def test_mutated_boundary_model_fails_cleanly_or_loads(seed: int) -> None:
    _, data = mutate(BOUNDARY, seed)
    try:
        g = load_model_bytes(data)
        check_graph(g)
    except NnoptError:
        return
    assert g.outputs
