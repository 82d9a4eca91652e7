"""Activations (RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH), int8 and float32,
against the tflite-micro interpreter.

Three layers, each compared with TFLM:

- the C kernels called directly (ctypes on a host build of the kernel sources), with the
  parameters the lowering computes, out of place and in place (output == input);
- the int8 tables the lowering emits for LOGISTIC/TANH/HARD_SWISH (numpy emulation);
- the whole pipeline (plan, generate, compile, run) on one model holding every variant.

int8 checks are exhaustive: all 256 input values for each (scale, zero point) case.
Many cases share one oracle model (independent ops side by side) to keep TFLM fast.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import Graph, LeakyReluOptions
from nnopt.lowering import activation as act
from nnopt.ops import check_graph
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cbuild import kernel_library, ptr
from support.graphs import load_past_import_checks
from support.tflite_builder import ModelBuilder

# nnopt.lowering imports its family modules only while its registry is empty: importing
# one family module directly (above) would leave every other operator unregistered for
# the rest of the session. Register them all.

ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
Quant = tuple[float, int]

# ----------------------------------------------------------------------------- helpers


def c_params(p: dict[str, Any]) -> ctypes.Structure:
    """A ctypes struct laid out like the C params struct (fields in dict order)."""
    fields = [(k, ctypes.c_float if isinstance(v, float) else ctypes.c_int32)
              for k, v in p.items()]
    cls = type("Params", (ctypes.Structure,), {"_fields_": fields})
    return cls(**p)


def call_unary(fn: Callable[..., int], prefix: Sequence[Any], x: np.ndarray,
               out_dtype: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Run a `(cfg..., in, out, size)` kernel out of place and in place."""
    x = np.ascontiguousarray(x)
    out = np.zeros_like(x, dtype=out_dtype or x.dtype)
    assert fn(*prefix, ptr(x), ptr(out), ctypes.c_int32(x.size)) == 0
    inplace = x.copy()
    assert fn(*prefix, ptr(inplace), ptr(inplace), ctypes.c_int32(x.size)) == 0
    return out, inplace


def side_by_side(opcode: str, cases: Sequence[tuple[Quant | None, Quant | None, Any]],
                 dtype: str = "int8", n: int = 256) -> bytes:
    """One model with an independent `opcode` op per case (input i -> output i)."""
    b = ModelBuilder(f"{opcode} cases")
    ins, outs = [], []
    for k, (iq, oq, options) in enumerate(cases):
        qi = {} if iq is None else {"scale": iq[0], "zero_point": iq[1]}
        qo = {} if oq is None else {"scale": oq[0], "zero_point": oq[1]}
        x = b.tensor((1, n), dtype, name=f"in{k}", **qi)
        y = b.tensor((1, n), dtype, name=f"out{k}", **qo)
        b.op(opcode, [x], [y], options)
        ins.append(x)
        outs.append(y)
    return b.build(ins, outs)


def oracle(model: bytes, inputs: Sequence[np.ndarray]) -> tuple[Graph, list[np.ndarray]]:
    outs, _ = run_tflm(model, inputs)
    return load_model_bytes(model), [o.reshape(-1) for o in outs]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    return kernel_library(tmp_path_factory, "act", "activation")


def check_int8_cases(lib: ctypes.CDLL, opcode: str,
                     cases: Sequence[tuple[Quant, Quant, Any]]) -> None:
    """TFLM == direct C kernel (out of place, in place) == emitted table, all inputs."""
    graph, expected = oracle(side_by_side(opcode, cases), [ALL_INT8] * len(cases))
    check_graph(graph)
    for op, want in zip(graph.ops, expected, strict=True):
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        label = f"{opcode} in {x.quant} out {y.quant} {op.options}"
        if opcode in ("LOGISTIC", "TANH", "HARD_SWISH"):
            p = (act.hard_swish_params(op, x, y) if opcode == "HARD_SWISH"
                 else act.sigmoid_params(op, x))
            table = act.int8_table(opcode, p)
            np.testing.assert_array_equal(table[ALL_INT8.reshape(-1).view(np.uint8)], want,
                                          err_msg=f"table: {label}")
            fn, prefix = getattr(lib, f"nnrt_{opcode.lower()}_s8"), [c_params(p)]
            got, inplace = call_unary(lib.nnrt_table_lookup_s8, [ptr(table)], ALL_INT8)
            np.testing.assert_array_equal(got.reshape(-1), want, err_msg=label)
            np.testing.assert_array_equal(inplace.reshape(-1), want, err_msg=label)
        elif opcode == "RELU":
            fn, prefix = lib.nnrt_relu_s8, [c_params(act.relu_params(op, x, y))]
        elif opcode == "RELU6":
            fn, prefix = lib.nnrt_clamp_s8, list(act.relu6_bounds(x))
        else:
            assert isinstance(op.options, LeakyReluOptions)
            p = act.leaky_relu_params(op, x, y, op.options.alpha)
            fn, prefix = lib.nnrt_leaky_relu_s8, [c_params(p)]
        got, inplace = call_unary(fn, [ctypes.byref(a) if isinstance(a, ctypes.Structure)
                                       else a for a in prefix], ALL_INT8)
        np.testing.assert_array_equal(got.reshape(-1), want, err_msg=f"kernel: {label}")
        np.testing.assert_array_equal(inplace.reshape(-1), want, err_msg=f"in place: {label}")


# Input scales from tiny to saturating (radius 0 above ~2^4), zero points at the extremes.
SIGMOID_SCALES = (2.0**-20, 1e-3, 1 / 128, 0.0123, 0.05, 0.1, 0.37, 1.0, 3.0, 16.0, 40.0)
ZERO_POINTS = (-128, -7, 0, 77, 127)


@pytest.mark.parametrize("opcode, out_q", [("LOGISTIC", (1 / 256, -128)),
                                           ("TANH", (1 / 128, 0))])
def test_sigmoid_int8_exhaustive(lib: ctypes.CDLL, opcode: str, out_q: Quant) -> None:
    cases = [((s, zp), out_q, None) for s in SIGMOID_SCALES for zp in ZERO_POINTS]
    check_int8_cases(lib, opcode, cases)


def test_sigmoid_int8_ignores_output_quant(lib: ctypes.CDLL) -> None:
    # TFLM does not read LOGISTIC's output scale (only checks the zero point): follow it.
    check_int8_cases(lib, "LOGISTIC", [((0.05, 3), (0.1, -128), None)])
    check_int8_cases(lib, "TANH", [((0.05, 3), (0.3, 12), None)])


HARD_SWISH_CASES = [
    ((in_s, in_zp), (out_s, out_zp), None)
    for in_s, out_s in [(0.001, 0.0008), (0.004, 0.003), (3 / 256, 0.01), (0.02, 0.02),
                        (0.05, 0.03), (0.1, 0.12), (0.2, 0.15), (0.5, 0.4), (4.0, 3.5),
                        (0.05, 0.05 / 127), (1.0, 0.01), (0.02, 5.0)]
    for in_zp, out_zp in [(-128, -128), (3, -10), (127, 40), (-60, 127)]
]


def test_hard_swish_int8_exhaustive(lib: ctypes.CDLL) -> None:
    check_int8_cases(lib, "HARD_SWISH", HARD_SWISH_CASES)


def test_relu_int8_exhaustive(lib: ctypes.CDLL) -> None:
    quants = [(0.05, 0), (0.05, -128), (0.1, 20), (0.02, 127), (0.5, -3), (1e-4, 5)]
    cases = [(qi, qo, None) for qi in quants for qo in quants]
    check_int8_cases(lib, "RELU", cases)


def test_relu6_int8_exhaustive(lib: ctypes.CDLL) -> None:
    # RELU6 int8 clamps in the input's quantisation and ignores the output's (TFLM).
    quants = [(0.05, 0), (0.05, -128), (6 / 255, -128), (0.01, 10), (0.1, 127),
              (0.023, -50), (1.0, 0), (7.0, 3)]
    cases = [(qi, qo, None) for qi in quants for qo in [qi, (0.02, -100)]]
    check_int8_cases(lib, "RELU6", cases)


def test_leaky_relu_int8_exhaustive(lib: ctypes.CDLL) -> None:
    quants = [((0.05, 0), (0.05, 0)), ((0.05, -128), (0.04, -100)), ((0.1, 30), (0.2, -5)),
              ((0.02, 127), (0.01, 0)), ((0.3, -7), (0.05, 12))]
    alphas = (0.2, 0.01, 0.0, 1.5, -0.5, 3.0)
    cases = [(qi, qo, LeakyReluOptions(a)) for qi, qo in quants for a in alphas]
    check_int8_cases(lib, "LEAKY_RELU", cases)


# ----------------------------------------------------------------------------- float32

FLOATS = np.concatenate([
    np.linspace(-20.0, 20.0, 801, dtype=np.float32),
    np.array([0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0, 6.0, 2.9999998, 6.0000005, -9.0,
              -9.000001, 16.619047164916992188, 16.619049, 88.0, -88.0, -104.0, 1e30,
              -1e30], dtype=np.float32),
    np.random.default_rng(7).standard_normal(1000).astype(np.float32) * 4,
]).astype(np.float32)


@pytest.mark.parametrize("opcode", ["RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH",
                                    "LEAKY_RELU"])
def test_float_against_tflm(lib: ctypes.CDLL, opcode: str) -> None:
    alphas = (0.2, -0.3, 1.7) if opcode == "LEAKY_RELU" else (None,)
    cases = [(None, None, None if a is None else LeakyReluOptions(a)) for a in alphas]
    x = FLOATS.reshape(1, -1)
    _, expected = oracle(side_by_side(opcode, cases, "float32", x.size), [x] * len(cases))
    for alpha, want in zip(alphas, expected, strict=True):
        fn = getattr(lib, f"nnrt_{opcode.lower()}_f32")
        prefix = [] if alpha is None else [ctypes.c_float(alpha)]
        got, inplace = call_unary(fn, prefix, x)
        np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-5, atol=0,
                                   err_msg=f"{opcode} alpha={alpha}")
        np.testing.assert_array_equal(inplace, got)
        # on the host both sides use glibc's expf/tanhf: expect identical bits
        np.testing.assert_array_equal(got.reshape(-1).view(np.int32), want.view(np.int32))


# ----------------------------------------------------------------------------- C arguments


def test_kernels_reject_bad_arguments(lib: ctypes.CDLL) -> None:
    x = np.zeros(4, dtype=np.int8)
    bad_p = c_params({"input_zero_point": 0, "input_range_radius": -1,
                      "input_multiplier": 1 << 30, "input_shift": 3})
    assert lib.nnrt_logistic_s8(ctypes.byref(bad_p), ptr(x), ptr(x), 4) == -1
    assert lib.nnrt_clamp_s8(5, 4, ptr(x), ptr(x), 4) == -1
    assert lib.nnrt_clamp_s8(0, 4, None, ptr(x), 4) == -1
    assert lib.nnrt_relu_f32(ptr(x), ptr(x), -1) == -1
    assert lib.nnrt_table_lookup_s8(None, ptr(x), ptr(x), 4) == -1
    hs = c_params({"input_zero_point": 0, "output_zero_point": 0, "reluish_multiplier": 1,
                   "reluish_exponent": 0, "output_multiplier": 1, "output_exponent": 1})
    assert lib.nnrt_hard_swish_s8(ctypes.byref(hs), ptr(x), ptr(x), 4) == -1
    assert lib.nnrt_relu_f32(ptr(x), ptr(x), 0) == 0  # empty is fine


# ----------------------------------------------------------------------------- check()


@pytest.mark.parametrize("opcode, dtype, in_q, out_q, match", [
    ("LOGISTIC", "int16", (1 / 4096, 3), (1 / 32768, 0), "zero point 3"),
    ("TANH", "int16", (1 / 4096, 0), (1 / 16384, 0), "not 2\\^-15"),
    ("TANH", "uint8", (0.05, 128), (1 / 128, 128), "uint8"),
    ("RELU", "int8", (1.0, 0), (1e-12, 0), "scale ratio"),
    ("HARD_SWISH", "int8", (0.05, 0), (1e-6, 0), "too small"),
    ("LOGISTIC", "int8", (1e-12, 0), (1 / 256, -128), "scale"),
])
def test_check_refuses(opcode: str, dtype: str, in_q: Quant, out_q: Quant,
                       match: str,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    data = side_by_side(opcode, [(in_q, out_q, None)], dtype)
    graph = load_past_import_checks(data, monkeypatch)
    with pytest.raises(UnsupportedError, match=match) as info:
        check_graph(graph)
    assert "op 0 (" + opcode + ")" in info.value.message


def test_check_refuses_mixed_dtypes() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 8), "int8", scale=0.1, zero_point=0)
    y = b.tensor((1, 8), "float32")
    b.op("RELU", [x], [y])
    with pytest.raises(UnsupportedError, match=r"int8 -> int8 or float32 -> float32"):
        check_graph(load_model_bytes(b.build([x], [y])))


# ----------------------------------------------------------------------------- pipeline


def pipeline_model() -> tuple[bytes, list[np.ndarray]]:
    """Every int8 and float32 variant side by side, plus an int8 chain whose
    intermediates the planner runs in place."""
    b = ModelBuilder("activations")
    ins: list[int] = []
    outs: list[int] = []
    data: list[np.ndarray] = []

    def op(opcode: str, iq: Quant | None, oq: Quant | None, options: Any = None) -> None:
        dtype = "float32" if iq is None else "int8"
        qi = {} if iq is None else {"scale": iq[0], "zero_point": iq[1]}
        qo = {} if oq is None else {"scale": oq[0], "zero_point": oq[1]}
        x = b.tensor((1, 4, 4, 16), dtype, **qi)
        y = b.tensor((1, 4, 4, 16), dtype, **qo)
        b.op(opcode, [x], [y], options)
        ins.append(x)
        outs.append(y)
        data.append(ALL_INT8.reshape(1, 4, 4, 16) if iq is not None
                    else FLOATS[:256].reshape(1, 4, 4, 16))

    op("LOGISTIC", (0.06, -3), (1 / 256, -128))
    op("TANH", (0.03, 10), (1 / 128, 0))
    op("HARD_SWISH", (0.05, -20), (0.04, -50))
    op("RELU", (0.05, -20), (0.02, -128))
    op("RELU", (0.05, -20), (0.05, -20))
    op("RELU6", (0.04, 5), (0.04, 5))
    op("LEAKY_RELU", (0.05, 0), (0.03, 10), LeakyReluOptions(0.1))
    for opcode in ("RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH"):
        op(opcode, None, None)
    op("LEAKY_RELU", None, None, LeakyReluOptions(0.3))
    # chain: the three intermediates die at the next op and are overwritten in place
    q = (0.05, -2)
    x = b.tensor((1, 256), "int8", scale=q[0], zero_point=q[1])
    h = b.tensor((1, 256), "int8", scale=0.04, zero_point=-40)
    r = b.tensor((1, 256), "int8", scale=0.04, zero_point=-40)
    s = b.tensor((1, 256), "int8", scale=1 / 256, zero_point=-128)
    t = b.tensor((1, 256), "int8", scale=1 / 128, zero_point=0)
    b.op("HARD_SWISH", [x], [h])
    b.op("RELU6", [h], [r])
    b.op("LOGISTIC", [r], [s])
    b.op("TANH", [s], [t])
    ins.append(x)
    outs.append(t)
    data.append(ALL_INT8.copy())
    return b.build(ins, outs), data


@pytest.mark.slow
def test_pipeline_bit_exact() -> None:
    model, inputs = pipeline_model()
    want, want_all = run_tflm(model, inputs)
    got, got_all = run_nnopt(model, inputs)
    graph = load_model_bytes(model)
    for op in graph.ops:  # every op's output, not only the graph outputs
        t = op.outputs[0]
        np.testing.assert_array_equal(got_all[t], want_all[t],
                                      err_msg=f"op {op.index} {op.opcode}")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
