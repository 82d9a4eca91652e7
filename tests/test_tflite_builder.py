"""tests/support/tflite_builder.py: models load in nnopt's frontend and run in TFLM."""

from __future__ import annotations

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime

from nnopt.cdefs import DType
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import (
    ConcatOptions,
    ConvOptions,
    FullyConnectedOptions,
    PoolOptions,
    ReducerOptions,
    SoftmaxOptions,
    SqueezeOptions,
    StridedSliceOptions,
)
from support.tflite_builder import (
    ModelBuilder,
    binary_model,
    combine_models,
    conv2d_model,
    depthwise_conv2d_model,
    fully_connected_model,
    pool2d_model,
    unary_model,
)


def run_tflm(model: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    it = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return np.asarray(it.get_output(0))


def conv_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Float NHWC conv, symmetric zero padding, OHWI filter."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    o, kh, kw, _ = w.shape
    oh = (xp.shape[1] - kh) // stride + 1
    ow = (xp.shape[2] - kw) // stride + 1
    y = np.zeros((x.shape[0], oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,ohwc->no", patch, w) + b
    return y


def test_tensors_quantisation_and_constants_round_trip() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 3), "int8", name="in", scale=0.25, zero_point=-7)
    w_data = np.arange(2 * 3 * 3 * 3, dtype=np.int8).reshape(2, 3, 3, 3)
    w = b.const(w_data, name="w", scale=[0.5, 0.001], axis=0)
    bias = b.const(np.array([7, -9], np.int32), name="b", scale=[0.125, 0.00025])
    y = b.tensor((1, 4, 4, 2), "int8", name="out", scale=1.5, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [y], ConvOptions("SAME", 1, 1, activation="RELU6"))
    g = load_model_bytes(b.build([x], [y]))
    assert [t.name for t in g.tensors] == ["in", "w", "b", "out"]
    assert g.inputs == (0,) and g.outputs == (3,)
    t_in, t_w, t_b, t_out = g.tensors
    assert t_in.shape == (1, 4, 4, 3) and t_in.dtype == DType.INT8 and not t_in.is_constant
    assert t_in.quant is not None and t_in.quant.zero_point == (-7,)
    assert t_in.quant.scale == (0.25,)
    assert t_w.quant is not None and t_w.quant.per_channel and t_w.quant.axis == 0
    assert t_w.quant.scale == pytest.approx((0.5, 0.001))
    assert t_w.quant.zero_point == (0, 0)
    np.testing.assert_array_equal(t_w.array(), w_data)
    np.testing.assert_array_equal(t_b.array(), [7, -9])
    assert t_b.dtype == DType.INT32
    assert t_out.quant is not None and t_out.quant.zero_point == (3,)
    assert g.ops[0].options == ConvOptions("SAME", 1, 1, activation="RELU6")


@pytest.mark.parametrize("options", [
    ConvOptions("VALID", 2, 3, 2, 1, "RELU"),
    {"padding": "VALID", "stride_h": 2, "stride_w": 3, "dilation_h_factor": 2,
     "fused_activation_function": "RELU"},
    {"padding": "VALID", "stride_h": 2, "stride_w": 3, "dilation_h": 2, "activation": "RELU"},
])
def test_options_from_dataclass_or_dict(options: object) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 9, 9, 2), "float32")
    w = b.const(np.ones((3, 3, 3, 2), np.float32))
    y = b.tensor((1, 3, 3, 3), "float32")
    b.op("CONV_2D", [x, w, -1], [y], options)
    g = load_model_bytes(b.build([x], [y]))
    assert g.ops[0].options == ConvOptions("VALID", 2, 3, 2, 1, "RELU")
    assert g.ops[0].inputs == (0, 1, -1)
    out = run_tflm(b.build([x], [y]), [np.ones((1, 9, 9, 2), np.float32)])
    assert out.shape == (1, 3, 3, 3)


def test_float_conv_runs_in_tflm_and_matches_numpy() -> None:
    model = conv2d_model((2, 7, 6, 3), 5, (3, 3), strides=(2, 2), padding="VALID",
                         dtype="float32", seed=3)
    g = load_model_bytes(model)
    w, bias = g.tensors[1].array(), g.tensors[2].array()
    x = np.random.default_rng(0).standard_normal((2, 7, 6, 3)).astype(np.float32)
    np.testing.assert_allclose(run_tflm(model, [x]), conv_ref(x, w, bias, 2, 0),
                               rtol=1e-5, atol=1e-5)


def test_float_fully_connected_runs_in_tflm_and_matches_numpy() -> None:
    model = fully_connected_model((3, 2, 4), 5, dtype="float32", seed=1, keep_num_dims=True)
    g = load_model_bytes(model)
    assert g.tensors[3].shape == (3, 2, 5)
    assert g.ops[0].options == FullyConnectedOptions("NONE", keep_num_dims=True)
    w, bias = g.tensors[1].array(), g.tensors[2].array()
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype(np.float32)
    np.testing.assert_allclose(run_tflm(model, [x]), x @ w.T + bias, rtol=1e-5, atol=1e-6)


def test_helpers_are_deterministic_per_seed() -> None:
    assert conv2d_model((1, 5, 5, 2), 3, (3, 3), seed=4) == conv2d_model(
        (1, 5, 5, 2), 3, (3, 3), seed=4)
    assert conv2d_model((1, 5, 5, 2), 3, (3, 3), seed=4) != conv2d_model(
        (1, 5, 5, 2), 3, (3, 3), seed=5)


@pytest.mark.parametrize("model", [
    conv2d_model((1, 8, 8, 3), 4, (3, 3), per_channel=True),
    conv2d_model((1, 8, 8, 3), 4, (3, 3), per_channel=False, bias=False),
    conv2d_model((1, 9, 9, 2), 3, (3, 3), padding="VALID",
                 max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    depthwise_conv2d_model((1, 8, 8, 3), (3, 3), depth_multiplier=2, strides=(2, 2)),
    fully_connected_model((2, 10), 5),
    fully_connected_model((2, 10), 5, per_channel=True),
    pool2d_model("AVERAGE_POOL_2D", (1, 6, 6, 2), (2, 2), (2, 2)),
    pool2d_model("MAX_POOL_2D", (1, 6, 6, 2), (3, 3), (1, 1), padding="SAME"),
    binary_model("ADD", (1, 4, 4, 3), (1, 1, 1, 3), activation="RELU"),
    binary_model("MUL", (1, 4, 4, 3), (3,), const_b=np.array([1, -2, 3], np.int8)),
    binary_model("MAXIMUM", (2, 3), (2, 3), dtype="float32"),
    unary_model("RELU", (1, 5)),
    unary_model("LOGISTIC", (1, 5), out_quant=(1 / 256, -128)),
    unary_model("SOFTMAX", (1, 10), out_quant=(1 / 256, -128), options=SoftmaxOptions(1.0)),
    unary_model("RESHAPE", (1, 2, 3), out_shape=(1, 6),
                extra_inputs=[np.array([1, 6], np.int32)]),
    unary_model("SQUEEZE", (1, 1, 6), out_shape=(1, 6), options=SqueezeOptions((1,))),
    unary_model("MEAN", (1, 4, 4, 3), out_shape=(1, 1, 1, 3), options=ReducerOptions(True),
                extra_inputs=[np.array([1, 2], np.int32)]),
    unary_model("PAD", (1, 2, 2, 1), out_shape=(1, 4, 4, 1),
                extra_inputs=[np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)]),
    unary_model("STRIDED_SLICE", (1, 6), out_shape=(1, 3),
                options=StridedSliceOptions(),
                extra_inputs=[np.array([0, 0], np.int32), np.array([1, 6], np.int32),
                              np.array([1, 2], np.int32)]),
    unary_model("HARD_SWISH", (1, 8), dtype="float32"),
], ids=lambda m: load_model_bytes(m).ops[-1].opcode)
def test_helper_models_load_in_frontend_and_run_in_tflm(model: bytes) -> None:
    g = load_model_bytes(model)
    rng = np.random.default_rng(0)
    inputs = []
    for t in (g.tensors[i] for i in g.inputs):
        if t.dtype == DType.FLOAT32:
            inputs.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            inputs.append(rng.integers(-128, 128, size=t.shape).astype(np.int8))
    out = run_tflm(model, inputs)
    assert out.shape == g.tensors[g.outputs[0]].shape


def test_concatenation_of_two_inputs() -> None:
    b = ModelBuilder()
    x0 = b.tensor((1, 2, 3), "float32")
    x1 = b.tensor((1, 2, 2), "float32")
    y = b.tensor((1, 2, 5), "float32")
    b.op("CONCATENATION", [x0, x1], [y], ConcatOptions(axis=2))
    model = b.build([x0, x1], [y])
    assert load_model_bytes(model).ops[0].options == ConcatOptions(axis=2)
    a, c = np.ones((1, 2, 3), np.float32), np.zeros((1, 2, 2), np.float32)
    np.testing.assert_array_equal(run_tflm(model, [a, c]), np.concatenate([a, c], axis=2))


def test_opcode_above_127_uses_builtin_code_field() -> None:
    import tflite

    b = ModelBuilder()
    x = b.tensor((4,), "float32")
    y = b.tensor((4,), "float32")
    b.op("GELU", [x], [y])  # code 150: deprecated_builtin_code must say 127
    model = tflite.Model.GetRootAsModel(b.build([x], [y]), 0)
    code = model.OperatorCodes(0)
    assert code.BuiltinCode() == tflite.BuiltinOperator.GELU
    assert code.DeprecatedBuiltinCode() == 127


def test_constant_data_is_16_byte_aligned() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 3), "float32")
    w = b.const(np.array([[1.0, 2.0, 3.0]], np.float32))
    bias = b.const(np.array([0.5], np.float32))
    y = b.tensor((1, 1), "float32")
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    model = b.build([x], [y])
    for payload in (np.array([1, 2, 3], np.float32).tobytes(),
                    np.array([0.5], np.float32).tobytes()):
        assert model.find(payload) % 16 == 0


@pytest.mark.parametrize(("call", "message"), [
    (lambda b: b.tensor((2,), "complex64"), "unsupported tensor dtype"),
    (lambda b: b.tensor((2, 3), "int8", scale=[1.0, 2.0], axis=1), "per-channel"),
    (lambda b: b.tensor((2,), "int8", scale=[1.0, 2.0], zero_point=[0, 0, 0]), "zero points"),
    (lambda b: b.tensor((2,), "int8", zero_point=3), "without scale"),
    (lambda b: b.op("NOT_AN_OP", [], []), "unknown builtin"),
    (lambda b: b.op("RELU", [5], []), "out of range"),
    (lambda b: b.op("RELU", [], [], {"alpha": 1.0}), "no options table"),
    (lambda b: b.op("CONV_2D", [], [], ConvOptions(
        "VALID", 1, 1, fused_max_pool=PoolOptions("VALID", 2, 2, 2, 2))), "fused_max_pool"),
])
def test_bad_descriptions_raise_value_error(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(ModelBuilder())  # type: ignore[operator]


def test_bad_option_field_and_constant_input_raise() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 2), "float32")
    y = b.tensor((1, 2), "float32")
    b.op("SOFTMAX", [x], [y], {"no_such_field": 1})
    with pytest.raises(ValueError, match="no field 'no_such_field'"):
        b.build([x], [y])
    b2 = ModelBuilder()
    c = b2.const(np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match="constant"):
        b2.build([c], [c])
    b3 = ModelBuilder()
    x3 = b3.tensor((1, 2), "float32")
    y3 = b3.tensor((1, 2), "float32")
    b3.op("CONV_2D", [x3], [y3], {"padding": "FULL"})
    with pytest.raises(ValueError, match="padding='FULL'"):
        b3.build([x3], [y3])


def test_combine_models_keeps_every_model_runnable_side_by_side() -> None:
    parts = [conv2d_model((1, 6, 6, 2), 3, (3, 3), seed=1),
             fully_connected_model((2, 5), 3, dtype="float32", seed=2),
             depthwise_conv2d_model((1, 5, 5, 2), (3, 3), depth_multiplier=2, bias=False)]
    combined = combine_models(parts)
    g = load_model_bytes(combined.data)
    assert [op.opcode for op in g.ops] == ["CONV_2D", "FULLY_CONNECTED", "DEPTHWISE_CONV_2D"]
    assert len(g.inputs) == len(g.outputs) == 3
    sizes = [len(load_model_bytes(p).tensors) for p in parts]
    assert combined.offsets == (0, sizes[0], sizes[0] + sizes[1])
    assert combined.tensor(1, 0) == g.inputs[1]
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, (1, 6, 6, 2)).astype(np.int8),
              rng.standard_normal((2, 5)).astype(np.float32),
              rng.integers(-128, 128, (1, 5, 5, 2)).astype(np.int8)]
    it = runtime.Interpreter.from_bytes(combined.data)
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    for k, part in enumerate(parts):
        np.testing.assert_array_equal(it.get_output(k), run_tflm(part, [inputs[k]]))


def test_small_model_with_big_activations_runs_with_default_tflm_arena() -> None:
    # 1x1 conv, 8 weights, 2 x 64 KiB of activations: padded so that the interpreter's
    # default arena (10x the file size) holds it.
    model = conv2d_model((1, 128, 128, 4), 2, (1, 1), bias=False)
    assert len(model) * 10 >= 2 * (128 * 128 * 6)
    it = runtime.Interpreter.from_bytes(model)
    it.set_input(np.zeros((1, 128, 128, 4), np.int8), 0)
    it.invoke()
    assert it.get_output(0).shape == (1, 128, 128, 2)
