"""CONV_2D and DEPTHWISE_CONV_2D (nnrt/kernels/conv.h, nnopt.lowering.conv) against the
tflite-micro interpreter: int8 bit-exact, float32 to 1e-5 relative, including the max
pool folded into the convolution (Unlu 2020).

Every group of single-op cases is combined into one model so that one generated-C build
covers it; a failure names the case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConvOptions, PoolOptions
from nnopt.lowering import EmitContext
from nnopt.lowering.call import AddressOf, TensorArg, call_of, params_of, render
from nnopt.lowering.conv_requant import weight_requant
from nnopt.ops import check_graph, lowering_for
from nnopt.planner import PlanOptions
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cbuild import CBuild, c_source, kernel_sources
from support.tflite_builder import (
    ModelBuilder,
    combine_models,
    conv2d_model,
    depthwise_conv2d_model,
    grouped_float_conv_model,
    random_int8,
)

FILE_ORDER = PlanOptions(order="file")
MAX_IO = 16  # inputs/outputs the model-runner harness accepts (NNRT_HARNESS_MAX_IO)


def grouped_conv_model(seed: int = 0) -> bytes:
    """A grouped CONV_2D (input depth 4, filter depth 2: two groups of 3 filters)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor((1, 6, 5, 4), "int8", scale=0.05, zero_point=3)
    w = b.const(random_int8(rng, (6, 3, 3, 2), -127, 127), scale=rng.uniform(0.002, 0.02, 6),
                axis=0)
    bias = b.const(rng.integers(-1000, 1000, 6).astype(np.int32), scale=[1e-4] * 6)
    y = b.tensor((1, 6, 5, 6), "int8", scale=0.3, zero_point=-5)
    b.op("CONV_2D", [x, w, bias], [y], ConvOptions("SAME", 1, 1))
    return b.build([x], [y])


INT8_CASES: dict[str, bytes] = {
    "valid_3x3_s2_odd": conv2d_model((1, 9, 7, 5), 6, (3, 3), strides=(2, 2),
                                     padding="VALID", seed=2),
    "same_5x5_s3_odd": conv2d_model((1, 11, 10, 2), 3, (5, 5), strides=(3, 3), seed=3),
    "same_dilation2": conv2d_model((1, 10, 9, 3), 4, (3, 3), dilation=(2, 2), seed=4),
    "valid_dilation_2x1_stride_1x2": conv2d_model((1, 9, 9, 2), 3, (3, 2), dilation=(2, 1),
                                                  strides=(1, 2), padding="VALID", seed=5),
    "1x1_per_tensor_no_bias": conv2d_model((1, 5, 5, 16), 8, (1, 1), per_channel=False,
                                           bias=False, seed=6),
    "kernel_larger_than_input_same": conv2d_model((1, 3, 3, 2), 3, (5, 5), seed=8),
    "scales_span_orders": conv2d_model(
        (1, 6, 6, 3), 5, (3, 3), weight_scales=[1e-5, 1e-4, 1e-3, 1e-2, 1e-1],
        output_quant=(0.02, 4), seed=9),
    "saturate_both_ends": conv2d_model((1, 6, 6, 8), 4, (3, 3), output_quant=(0.002, 0),
                                       seed=10),
    "input_zp_min_output_zp_max": conv2d_model((1, 6, 6, 3), 4, (3, 3), input_quant=(0.02, -128),
                                               output_quant=(0.05, 127), seed=11),
    "input_zp_max_output_zp_min": conv2d_model((1, 6, 6, 3), 4, (3, 3), input_quant=(0.02, 127),
                                               output_quant=(0.05, -128), seed=12),
    "relu": conv2d_model((1, 6, 6, 3), 4, (3, 3), activation="RELU", output_quant=(0.05, -20),
                         seed=13),
    "relu6": conv2d_model((1, 6, 6, 3), 4, (3, 3), activation="RELU6",
                          output_quant=(0.02, -128), seed=14),
    "relu_n1_to_1": conv2d_model((1, 6, 6, 3), 4, (3, 3), activation="RELU_N1_TO_1",
                                 output_quant=(0.01, 3), seed=15),
    "relu_output_zp_max": conv2d_model((1, 5, 5, 2), 3, (3, 3), activation="RELU",
                                       output_quant=(0.05, 127), seed=16),
    "batch3": conv2d_model((3, 5, 6, 3), 4, (3, 3), strides=(2, 1), seed=17),
    "grouped": grouped_conv_model(18),
}

DEPTHWISE_CASES: dict[str, bytes] = {
    "dw_m1_same": depthwise_conv2d_model((1, 8, 8, 5), (3, 3), seed=21),
    "dw_m2_s2": depthwise_conv2d_model((1, 9, 9, 3), (3, 3), depth_multiplier=2,
                                       strides=(2, 2), seed=22),
    "dw_m3_valid_odd": depthwise_conv2d_model((1, 7, 8, 2), (3, 3), depth_multiplier=3,
                                              padding="VALID", seed=23),
    "dw_dilation2_s3": depthwise_conv2d_model((1, 11, 10, 4), (3, 3), dilation=(2, 2),
                                              strides=(3, 3), seed=24),
    "dw_5x5_relu6": depthwise_conv2d_model((1, 8, 8, 4), (5, 5), activation="RELU6",
                                           output_quant=(0.03, -128), seed=25),
    "dw_per_tensor_no_bias": depthwise_conv2d_model((1, 6, 6, 4), (3, 3), per_channel=False,
                                                    bias=False, seed=26),
    "dw_saturate_zp_extremes": depthwise_conv2d_model(
        (2, 6, 6, 3), (3, 3), depth_multiplier=2, input_quant=(0.05, -128),
        output_quant=(0.001, 127), weight_scales=[1e-3, 1e-2, 1e-1, 1e-3, 1e-2, 1e-1], seed=27),
    # more taps than the fast path takes (30 > DW_MAX_TAPS): the generic loops, four
    # outputs of an input channel at a time and the fifth alone, borders included
    "dw_m5_6x5_wide": depthwise_conv2d_model((1, 13, 12, 2), (6, 5), depth_multiplier=5,
                                             strides=(2, 2), dilation=(1, 2), seed=28),
}

FLOAT_CASES: dict[str, bytes] = {
    "f_same_3x3": conv2d_model((1, 8, 8, 3), 4, (3, 3), dtype="float32", seed=31),
    "f_valid_s2_odd_relu": conv2d_model((1, 9, 7, 3), 5, (3, 3), strides=(2, 2),
                                        padding="VALID", activation="RELU", dtype="float32",
                                        seed=32),
    "f_dilation2_relu6": conv2d_model((1, 10, 10, 2), 3, (3, 3), dilation=(2, 2),
                                      activation="RELU6", dtype="float32", seed=33),
    "f_1x1_no_bias_s3": conv2d_model((2, 7, 7, 6), 4, (1, 1), strides=(3, 3), bias=False,
                                     dtype="float32", seed=34),
    "f_relu_n1_to_1": conv2d_model((1, 5, 5, 2), 3, (3, 3), activation="RELU_N1_TO_1",
                                   dtype="float32", seed=35),
    "f_dw_m2": depthwise_conv2d_model((1, 8, 8, 3), (3, 3), depth_multiplier=2,
                                      dtype="float32", seed=36),
    "f_dw_m3_s2_dil2_relu": depthwise_conv2d_model(
        (1, 11, 9, 2), (3, 3), depth_multiplier=3, strides=(2, 2), dilation=(2, 2),
        activation="RELU", dtype="float32", seed=37),
    # input depth 6, filter depth 3: two groups of 5 filters, one block of four channels
    # and one left over per group
    "f_grouped": grouped_float_conv_model((1, 6, 5, 6), 10, 3, seed=38),
}


def _run_cases(cases: dict[str, bytes], *, seeds: Sequence[int] = (0, 1),
               options: PlanOptions = FILE_ORDER,
               sanitize: bool = False) -> dict[str, np.ndarray]:
    """Run the cases as few models as the harness allows (16 inputs each); assert each
    output against the oracle (int8 bit-exact, float32 to 1e-5 relative). Returns the
    oracle outputs of the first seed by name."""
    names = list(cases)
    first: dict[str, np.ndarray] = {}
    for k in range(0, len(names), MAX_IO):
        chunk = {n: cases[n] for n in names[k:k + MAX_IO]}
        first.update(_run_chunk(chunk, seeds=seeds, options=options, sanitize=sanitize))
    return first


def _run_chunk(cases: dict[str, bytes], *, seeds: Sequence[int], options: PlanOptions,
               sanitize: bool) -> dict[str, np.ndarray]:
    """One combined model, one build; both seeds run the same executable."""
    combined = combine_models(list(cases.values()))
    first: dict[str, np.ndarray] = {}
    for seed in seeds:
        inputs = random_inputs(combined.data, seed)
        ref, _ = run_tflm(combined.data, inputs)
        ours, _ = run_nnopt(combined.data, inputs, options=options, sanitize=sanitize)
        for name, a, r in zip(cases, ours, ref, strict=True):
            r = r.reshape(a.shape)
            first.setdefault(name, r)
            if a.dtype == np.float32:
                np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                assert np.array_equal(a, r), (
                    f"case {name} (seed {seed}): {int((a != r).sum())} of {a.size} "
                    f"elements differ, max |diff| "
                    f"{np.abs(a.astype(int) - r.astype(int)).max()}")
    return first


@pytest.mark.slow
def test_int8_conv_edge_cases_bit_exact() -> None:
    assert len(INT8_CASES) <= MAX_IO  # one build
    ref = _run_cases(INT8_CASES, sanitize=True)  # and no out-of-bounds access or UB
    # The edge cases really reach the edges.
    sat = ref["saturate_both_ends"]
    assert (sat == -128).any() and (sat == 127).any()
    assert ref["relu6"].min() == -128 and ref["relu_output_zp_max"].min() == 127
    span = ref["scales_span_orders"]  # channel scales 1e-5 .. 1e-1: near zp .. saturated
    assert np.abs(span[..., 0].astype(int) - 4).max() <= 4
    assert set(np.unique(span[..., 4])) == {-128, 127}


@pytest.mark.slow
def test_int8_depthwise_and_float_conv_cases() -> None:
    """int8 depthwise bit-exact; float32 conv and depthwise to 1e-5 relative."""
    cases = {**DEPTHWISE_CASES, **FLOAT_CASES}
    assert len(cases) <= MAX_IO  # one build
    ref = _run_cases(cases)
    sat = ref["dw_saturate_zp_extremes"]
    assert (sat == 127).any() and (sat < 127).any()


def _random_case(rng: np.random.Generator, seed: int) -> bytes:
    """A random int8 conv or depthwise geometry that fits its input."""
    while True:
        depthwise = bool(rng.integers(2))
        kh, kw = (int(k) for k in rng.integers(1, 6, 2))
        sh, sw = (int(s) for s in rng.integers(1, 4, 2))
        dh, dw = (int(d) for d in rng.integers(1, 3, 2))
        padding = "SAME" if rng.integers(2) else "VALID"
        h, w = (int(v) for v in rng.integers(1, 13, 2))
        if padding == "VALID" and (h < (kh - 1) * dh + 1 or w < (kw - 1) * dw + 1):
            continue
        c = int(rng.integers(1, 7))
        kwargs: dict[str, Any] = dict(
            strides=(sh, sw), dilation=(dh, dw), padding=padding, seed=seed,
            activation=str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])),
            per_channel=bool(rng.integers(2)), bias=bool(rng.integers(2)),
            input_quant=(float(rng.uniform(0.005, 0.1)), int(rng.integers(-128, 128))))
        batches = int(rng.integers(1, 3))
        if depthwise:
            return depthwise_conv2d_model((batches, h, w, c), (kh, kw),
                                          depth_multiplier=int(rng.integers(1, 4)), **kwargs)
        return conv2d_model((batches, h, w, c), int(rng.integers(1, 7)), (kh, kw), **kwargs)


RANDOM_CASES = {f"random{k}": _random_case(np.random.default_rng(1000 + k), k)
                for k in range(MAX_IO)}


@pytest.mark.slow
def test_random_int8_geometries_bit_exact() -> None:
    """16 random conv/depthwise geometries (sizes, kernels 1-5, strides 1-3, dilation,
    padding, activation, zero points, per-tensor/per-channel, bias or not), one build."""
    _run_cases(RANDOM_CASES, seeds=(0,))


POOL_CASES: dict[str, bytes] = {
    "same_conv_pool2": conv2d_model((1, 8, 8, 3), 4, (3, 3), seed=41,
                                    max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    "valid_conv_pool3_leftover": conv2d_model((1, 12, 11, 2), 3, (3, 3), padding="VALID",
                                              seed=42, max_pool=PoolOptions("VALID", 3, 3, 3, 3)),
    "relu_conv_pool_stride_gt_filter": conv2d_model(
        (1, 10, 10, 3), 5, (3, 3), activation="RELU", output_quant=(0.05, -30), seed=43,
        max_pool=PoolOptions("VALID", 3, 2, 2, 2)),
    "dw_pool2": depthwise_conv2d_model((1, 8, 8, 3), (3, 3), depth_multiplier=2, seed=44,
                                       max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    "saturated_conv_pool": conv2d_model((1, 6, 6, 4), 3, (3, 3), output_quant=(0.002, 0),
                                        seed=45, max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    # lenet5's first conv: one input channel, 5x5, the matrix core per pool window
    "one_channel_5x5_pool2": conv2d_model((1, 14, 13, 1), 6, (5, 5), padding="VALID",
                                          seed=48, max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    "batch2_per_tensor_pool2": conv2d_model((2, 7, 7, 3), 5, (3, 3), per_channel=False,
                                            seed=49, max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    # columns over NNRT_CONV_POOL_STACK_BYTES (K = 3 * 3 * 32): the reference loops
    "deep_conv_pool_reference": conv2d_model((1, 6, 6, 32), 4, (3, 3), seed=50,
                                             max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
}
FLOAT_POOL_CASES: dict[str, bytes] = {
    "f_conv_pool2": conv2d_model((1, 8, 8, 3), 4, (3, 3), dtype="float32", seed=46,
                                 max_pool=PoolOptions("VALID", 2, 2, 2, 2)),
    "f_dw_relu6_pool3": depthwise_conv2d_model((1, 9, 9, 2), (3, 3), activation="RELU6",
                                               dtype="float32", seed=47,
                                               max_pool=PoolOptions("VALID", 3, 3, 3, 3)),
}


@pytest.mark.slow
@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_conv_max_pool_fused_equals_unfused_oracle(fuse: bool) -> None:
    cases = {**POOL_CASES, **FLOAT_POOL_CASES}
    combined = combine_models(list(cases.values()))
    graph = load_model_bytes(combined.data)
    conv_outputs = [op.outputs[0] for op in graph.ops if op.opcode != "MAX_POOL_2D"]
    inputs = random_inputs(combined.data, 5)
    ref, _ = run_tflm(combined.data, inputs)
    ours, trace = run_nnopt(combined.data, inputs, sanitize=fuse,
                            options=PlanOptions(order="file", fuse=fuse))
    # Fused: the full-resolution conv outputs never exist; unfused: they all do.
    assert all((t in trace) != fuse for t in conv_outputs)
    for name, a, r in zip(cases, ours, ref, strict=True):
        r = r.reshape(a.shape)
        if a.dtype == np.float32:
            np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            assert np.array_equal(a, r), f"case {name}: {int((a != r).sum())} differ"


def test_fused_conv_needs_no_scratch_and_emits_pool() -> None:
    from nnopt.passes.fuse import fuse_max_pool

    graph, fusions = fuse_max_pool(load_model_bytes(POOL_CASES["same_conv_pool2"]))
    assert len(fusions) == 1
    op = graph.ops[0]
    lowering = lowering_for(op)
    lowering.check(graph, op)
    assert lowering.scratch_bytes(graph, op) == 0
    arrays: dict[str, np.ndarray] = {}

    def const_array(suffix: str, arr: np.ndarray) -> str:
        arrays[suffix] = arr
        return f"op0_{suffix}"

    ctx = EmitContext(graph, op, lambda t: f"T{t}", const_array, "NULL")
    body = lowering.emit(ctx)
    call = call_of(body)
    assert call is not None and call.fn == "nnrt_conv2d_s8"
    assert call.args == (AddressOf("params"), TensorArg(0), TensorArg(1), TensorArg(2),
                         TensorArg(4))
    assert params_of(body)["params"].fields["pool"] == AddressOf("pool")
    assert params_of(body)["pool"].fields["output_h"] == 4
    text = render(body, ctx.pointers)
    assert "    .output_h = 4," in text and "    .pool = &pool," in text
    assert text[-1] == "return nnrt_conv2d_s8(&params, T0, T1, T2, T4);"
    assert arrays["mult"].dtype == np.int32 and arrays["mult"].shape == (4,)


# ----- refusals -----

def _conv_with(input_dtype: str, filter_dtype: str, *, bias_dtype: str | None = None,
               activation: str = "NONE", filter_zp: int = 0, depth_multiplier: int = 1,
               depthwise: bool = False, per_channel_axis: int | None = None) -> bytes:
    b = ModelBuilder()
    q_act: dict[str, Any] = {} if input_dtype == "float32" else {"scale": 0.05,
                                                                   "zero_point": 0}
    x = b.tensor((1, 4, 4, 2), input_dtype, **q_act)
    oc = 2 * depth_multiplier if depthwise else 3
    w_shape = (1, 3, 3, oc) if depthwise else (oc, 3, 3, 2)
    rng = np.random.default_rng(0)
    w_data = rng.integers(-10, 10, size=w_shape).astype(
        np.float32 if filter_dtype == "float32" else filter_dtype)
    q_w: dict[str, Any] = {}
    if filter_dtype != "float32":
        axis = per_channel_axis if per_channel_axis is not None else (3 if depthwise else 0)
        q_w = {"scale": [0.01] * w_shape[axis], "zero_point": filter_zp, "axis": axis}
    w = b.const(w_data, dtype=filter_dtype, **q_w)
    ins = [x, w]
    if bias_dtype is not None:
        q_b: dict[str, Any] = {} if bias_dtype == "float32" else {"scale": 0.0005}
        ins.append(b.const(np.zeros(oc, dtype=bias_dtype), **q_b))
    y = b.tensor((1, 4, 4, oc), input_dtype, **q_act)
    opts = ConvOptions("SAME", 1, 1, activation=activation, depth_multiplier=depth_multiplier)
    b.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", ins, [y], opts)
    return b.build([x], [y])


@pytest.mark.parametrize(("model", "message"), [
    (_conv_with("int16", "int8", bias_dtype="int32"), "16x8 bias tensor 2 .* is int32"),
    (_conv_with("uint8", "uint8", bias_dtype="int32"), "uint8"),
    (_conv_with("float32", "int8", bias_dtype="float32"), "hybrid"),
    (_conv_with("int8", "int8", bias_dtype="int64"), "bias tensor 2 .* is int64"),
    (_conv_with("int8", "int8", activation="TANH"), "fused activation TANH"),
    (_conv_with("int8", "int8", filter_zp=3), "asymmetric"),
    (_conv_with("int8", "int8", per_channel_axis=3), "axis 3; expected 1 or 3 on axis 0"),
    (_conv_with("int8", "int8", depthwise=True, per_channel_axis=2, depth_multiplier=2),
     "3 scales on axis 2; expected 1 or 4 on axis 3"),
    (_conv_with("float32", "float32", bias_dtype="int32"), "expected float32"),
    (_conv_with("int16", "int8", depthwise=True, depth_multiplier=2),
     "16x8 depthwise convolution without bias"),
], ids=["int16-int32-bias", "uint8", "hybrid", "int64-bias", "tanh", "asym-weights", "conv-axis",
        "dw-axis", "float-int-bias", "dw-int16"])
def test_refused_variants_name_op_and_tensor(model: bytes, message: str) -> None:
    graph = load_model_bytes(model)
    with pytest.raises(UnsupportedError, match=message) as err:
        lowering_for(graph.ops[0]).check(graph, graph.ops[0])
    assert "op 0 (" in err.value.message
    with pytest.raises(UnsupportedError):
        check_graph(graph)


def test_depth_multiplier_option_must_match_filter() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 2), "float32")
    w = b.const(np.ones((1, 3, 3, 4), np.float32))
    y = b.tensor((1, 4, 4, 4), "float32")
    b.op("DEPTHWISE_CONV_2D", [x, w, -1], [y], ConvOptions("SAME", 1, 1, depth_multiplier=1))
    graph = load_model_bytes(b.build([x], [y]))
    with pytest.raises(UnsupportedError, match=r"depth_multiplier option is 1 .* implies 2"):
        lowering_for(graph.ops[0]).check(graph, graph.ops[0])


# ----- the C API's argument checks -----



def test_kernel_argument_checks(cbuild: CBuild) -> None:
    exe = cbuild.program("arg_checks", [c_source("kernel_arg_checks.c"),
                                        *kernel_sources("conv", "fc", "internal")])
    proc = cbuild.run(exe)
    assert proc.returncode == 0, f"{proc.returncode} checks failed\n{proc.stderr}"


def test_dead_channel_keeps_the_fast_form_and_is_bit_exact() -> None:
    """A channel whose real multiplier is below 2^-32 (TFLM's (0, 0); vww_96_int8 has
    such channels) gets shift -31, inside the fast form, so the layer keeps its fast
    requantisation; it still outputs the zero point, bit-exact with the oracle."""
    model = conv2d_model((1, 8, 8, 16), 8, (1, 1), weight_scales=[1e-13] + [0.01] * 7,
                         output_quant=(0.05, 3), seed=11)
    graph = load_model_bytes(model)
    op = graph.ops[0]
    x, w = (graph.tensors[i] for i in op.inputs[:2])
    y = graph.tensors[op.outputs[0]]
    _, mults, shifts = weight_requant(op, x, w, y, 8, 0)
    assert mults[0] == 0 and shifts[0] == -31
    assert all(-31 <= s <= -2 for s in shifts)
    for seed in (0, 1):
        inputs = random_inputs(model, seed)
        ref, _ = run_tflm(model, inputs)
        ours, _ = run_nnopt(model, inputs)
        assert np.array_equal(ours[0], ref[0].reshape(ours[0].shape))
        assert (ours[0][..., 0] == 3).all()  # the dead channel: the output zero point
