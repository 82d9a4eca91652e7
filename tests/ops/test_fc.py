"""FULLY_CONNECTED (nnrt/kernels/fc.h, nnopt.lowering.fc) against the tflite-micro
interpreter: int8 bit-exact, float32 to 1e-5 relative. All cases run as one combined
model (one generated-C build); a failure names the case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import FullyConnectedOptions
from nnopt.lowering import EmitContext
from nnopt.lowering.call import render
from nnopt.ops import lowering_for
from nnopt.planner import PlanOptions
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.tflite_builder import ModelBuilder, combine_models, fully_connected_model

CASES: dict[str, bytes] = {
    "batch1": fully_connected_model((1, 32), 10, seed=1),
    "batch3_relu": fully_connected_model((3, 20), 7, activation="RELU",
                                         output_quant=(0.05, -10), seed=2),
    "flatten_4d_input": fully_connected_model((1, 2, 2, 5), 6, depth=20, seed=3),
    "flatten_to_2_rows": fully_connected_model((2, 3, 4), 5, depth=6, seed=4),
    "keep_num_dims_3d": fully_connected_model((2, 3, 8), 5, keep_num_dims=True, seed=5),
    "per_channel_scales_span_orders": fully_connected_model(
        (2, 16), 6, weight_scales=[1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0],
        output_quant=(0.05, 0), seed=6),
    "per_channel_no_bias_relu6": fully_connected_model(
        (2, 24), 4, per_channel=True, bias=False, activation="RELU6",
        output_quant=(0.03, -128), seed=7),
    "saturate_zp_extremes": fully_connected_model((2, 16), 8, input_quant=(0.05, -128),
                                                  output_quant=(0.001, 127), seed=8),
    "input_zp_max_relu_n1_to_1": fully_connected_model(
        (1, 16), 8, input_quant=(0.05, 127), activation="RELU_N1_TO_1",
        output_quant=(0.01, 0), seed=9),
    "asymmetric_per_tensor_weights": fully_connected_model((2, 16), 5, weight_zero_point=5,
                                                           seed=10),
    "deep_1024": fully_connected_model((1, 1024), 4, seed=11),
    "f_batch2": fully_connected_model((2, 12), 5, dtype="float32", seed=21),
    "f_relu6_keep_dims": fully_connected_model((2, 2, 6), 3, keep_num_dims=True,
                                               activation="RELU6", dtype="float32", seed=22),
    "f_no_bias_relu": fully_connected_model((1, 10), 4, bias=False, activation="RELU",
                                            dtype="float32", seed=23),
    "f_flatten_relu_n1_to_1": fully_connected_model((1, 2, 2, 3), 4, depth=12,
                                                    activation="RELU_N1_TO_1",
                                                    dtype="float32", seed=24),
    # two blocks of four outputs and one left over, the depth one past a multiple of 4
    "f_units9_depth37": fully_connected_model((2, 37), 9, dtype="float32", seed=25),
}


@pytest.mark.slow
def test_fully_connected_cases_match_oracle() -> None:
    assert len(CASES) <= 16  # the model-runner harness takes up to 16 inputs: one build
    combined = combine_models(list(CASES.values()))
    first: dict[str, np.ndarray] = {}
    for seed in (0, 1):
        inputs = random_inputs(combined.data, seed)
        ref, _ = run_tflm(combined.data, inputs)
        ours, _ = run_nnopt(combined.data, inputs, options=PlanOptions(order="file"),
                            sanitize=True)
        for name, a, r in zip(CASES, ours, ref, strict=True):
            r = r.reshape(a.shape)
            first.setdefault(name, r)
            if a.dtype == np.float32:
                np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                assert np.array_equal(a, r), (
                    f"case {name} (seed {seed}): {int((a != r).sum())} of {a.size} differ")
    sat = first["saturate_zp_extremes"]
    assert (sat == 127).any() and (sat == -128).any()
    assert first["per_channel_no_bias_relu6"].min() == -128
    span = first["per_channel_scales_span_orders"]
    assert set(np.unique(span[:, 5])) <= {-128, 127} and np.abs(span[:, 0]).max() <= 1
    assert first["f_no_bias_relu"].min() >= 0.0


def _fc_with(input_dtype: str, weight_dtype: str, *, bias_dtype: str | None = None,
             activation: str = "NONE", weight_zps: tuple[int, ...] = (0,),
             axis: int = 0, out_shape: tuple[int, ...] = (2, 3)) -> bytes:
    b = ModelBuilder()
    q_act: dict[str, Any] = {} if input_dtype == "float32" else {"scale": 0.05,
                                                                   "zero_point": 0}
    x = b.tensor((2, 4), input_dtype, **q_act)
    w_data = np.ones((3, 4), dtype=np.float32 if weight_dtype == "float32" else weight_dtype)
    q_w: dict[str, Any] = {}
    if weight_dtype != "float32":
        q_w = {"scale": [0.01] * len(weight_zps), "zero_point": list(weight_zps),
               "axis": axis}
    ins = [x, b.const(w_data, dtype=weight_dtype, **q_w)]
    if bias_dtype is not None:
        q_b: dict[str, Any] = {} if bias_dtype == "float32" else {"scale": 0.0005}
        ins.append(b.const(np.zeros(3, dtype=bias_dtype), **q_b))
    y = b.tensor(out_shape, input_dtype, **q_act)
    b.op("FULLY_CONNECTED", ins, [y], FullyConnectedOptions(activation))
    return b.build([x], [y])


@pytest.mark.parametrize(("model", "message"), [
    (_fc_with("int16", "int8", bias_dtype="int32"), "16x8 bias tensor 2 .* is int32"),
    (_fc_with("uint8", "uint8", bias_dtype="int32"), "uint8"),
    (_fc_with("float32", "int8", bias_dtype="float32"), "hybrid"),
    (_fc_with("int8", "int8", bias_dtype="int64"), "bias tensor 2 .* is int64"),
    (_fc_with("int8", "int8", activation="SIGN_BIT"), "fused activation SIGN_BIT"),
    (_fc_with("int8", "int8", weight_zps=(0, 1, 0)), "asymmetric"),
    (_fc_with("int8", "int8", weight_zps=(0, 0, 0, 0), axis=1),
     "4 scales on axis 1; expected 1 or 3 on axis 0"),
    (_fc_with("float32", "float32", out_shape=(2, 4)), "does not match weights"),
    (_fc_with("float32", "float32", out_shape=(3, 3)), "expected 3 rows of 4"),
], ids=["int16-int32-bias", "uint8", "hybrid", "int64-bias", "sign-bit", "asym-per-channel",
        "axis-1", "units-mismatch", "rows-mismatch"])
def test_refused_variants_name_op_and_tensor(model: bytes, message: str) -> None:
    graph = load_model_bytes(model)
    with pytest.raises(UnsupportedError, match=message) as err:
        lowering_for(graph.ops[0]).check(graph, graph.ops[0])
    assert "op 0 (FULLY_CONNECTED)" in err.value.message


def test_per_tensor_multiplier_uses_tflm_float32_scale_product() -> None:
    """Per-tensor FC multiplies input and weight scale in float32 first (TFLM's
    GetQuantizedConvolutionMultipler); per-channel in double. Pick scales where the two
    roundings give different multipliers and check the emitted constant."""
    from nnopt.multiplier import quantize_multiplier

    s_in, s_out = 0.1, 0.3
    for s_w in np.linspace(0.01, 0.02, 200, dtype=np.float32):
        f32 = float(np.float32(s_in) * np.float32(s_w)) / float(np.float32(s_out))
        f64 = float(np.float32(s_in)) * float(s_w) / float(np.float32(s_out))
        if quantize_multiplier(f32) != quantize_multiplier(f64):
            break
    else:
        pytest.skip("no scale separates the two roundings")
    model = fully_connected_model((1, 4), 2, input_quant=(s_in, 0),
                                  output_quant=(s_out, 0), weight_scales=[float(s_w)])
    graph = load_model_bytes(model)
    arrays: dict[str, np.ndarray] = {}

    def const_array(suffix: str, arr: np.ndarray) -> str:
        arrays[suffix] = arr
        return suffix

    ctx = EmitContext(graph, graph.ops[0], lambda t: f"T{t}", const_array, "NULL")
    body = render(lowering_for(graph.ops[0]).emit(ctx), ctx.pointers)
    assert body[-1] == "return nnrt_fully_connected_s8(&params, T0, T1, T2, T3);"
    assert (int(arrays["mult"][0]), int(arrays["shift"][0])) == quantize_multiplier(f32)
    assert "    .per_channel = 0," in body
