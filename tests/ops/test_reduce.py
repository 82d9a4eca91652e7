"""PRELU, ELU, REDUCE_MAX, REDUCE_MIN, SUM, ARG_MAX and ARG_MIN: bit-exact against
TFLite Micro, in one multi-op model (one build, one oracle run): int8 PRELU with
broadcasting alphas of several shapes and non-zero alpha zero points, float32 PRELU;
ELU's int8 table on all 256 input values for several quantisations, float32 ELU; the
reductions over single, several, negative, repeated and all axes, keep_dims or not, int8
and float32, SUM also int16 (requantised); ARG_MAX/ARG_MIN along every axis with
many ties; CUMSUM (float32 and int8, with zero points and wrapping long axes) along
every axis, exclusive and reverse."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ReducerOptions
from nnopt.lowering import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import Results, assert_case_matches, assert_cortex_m7_matches, oracle_results
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

PRELU_SHAPES = [((1, 5, 7, 3), (3,)), ((2, 4, 6), (1, 6)), ((1, 3, 4, 5), (1, 1, 1, 5)),
                ((1, 3, 4, 5), (1,)), ((3, 7), (3, 1)), ((1, 2, 3, 4), (2, 3, 4)),
                ((1, 64, 12), (1, 12))]
ELU_QUANT = [((0.05, 3), (0.03, -20)), ((0.1, -128), (0.02, 10)), ((0.0078, 0), (0.0078, 0)),
             ((0.2, 50), (0.01, -128)), ((0.004, -7), (0.05, 100))]
REDUCE_AXES: list[list[int]] = [[1], [0, 2], [-1], [1, 3], [0, 1, 2, 3], [1, 1, -3], [3, 0],
                                [2]]
REDUCE_SHAPE = (2, 3, 4, 5)


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("prelu elu reduce cases")
    rng = np.random.default_rng(14)
    out_of: dict[str, int] = {}
    for k, (shape, ashape) in enumerate(PRELU_SHAPES):
        out_shape = tuple(np.broadcast_shapes(shape, ashape))
        qa: dict[str, Any] = {"scale": 0.04, "zero_point": -2}
        x = b.tensor(shape, "int8", data=_rand(rng, shape, "int8"), scale=0.05, zero_point=4)
        a = b.const(_rand(rng, ashape, "int8"), scale=[0.004, 0.02][k % 2],
                    zero_point=[0, 3][k % 2]) if k % 3 else \
            b.tensor(ashape, "int8", data=_rand(rng, ashape, "int8"), **qa)
        y = b.tensor(out_shape, "int8", scale=0.03, zero_point=-5 + k)
        b.op("PRELU", [x, a], [y])
        out_of[f"prelu-int8-{k}"] = y
        xf = b.tensor(shape, "float32", data=_rand(rng, shape, "float32"))
        af = b.const((rng.standard_normal(ashape) * 0.5).astype(np.float32))
        yf = b.tensor(out_shape, "float32")
        b.op("PRELU", [xf, af], [yf])
        out_of[f"prelu-float32-{k}"] = yf
    every_byte = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 16)
    for k, ((si, zi), (so, zo)) in enumerate(ELU_QUANT):
        x = b.tensor((1, 16, 16), "int8", data=every_byte, scale=si, zero_point=zi)
        y = b.tensor((1, 16, 16), "int8", scale=so, zero_point=zo)
        b.op("ELU", [x], [y])
        out_of[f"elu-int8-{k}"] = y
    xf = b.tensor((3, 5, 7), "float32",
                  data=np.linspace(-12, 4, 105, dtype=np.float32).reshape(3, 5, 7))
    yf = b.tensor((3, 5, 7), "float32")
    b.op("ELU", [xf], [yf])
    out_of["elu-float32"] = yf
    for opcode, dtypes in (("REDUCE_MAX", ("int8", "float32")),
                           ("REDUCE_MIN", ("int8", "float32")),
                           ("SUM", ("int8", "int16", "float32"))):
        for dtype in dtypes:
            q: dict[str, Any] = ({"scale": 0.02, "zero_point": 7} if dtype == "int8" else
                                 {"scale": 0.001, "zero_point": 0} if dtype == "int16" else {})
            for k, axes in enumerate(REDUCE_AXES):
                for keep in (False, True):
                    rank = len(REDUCE_SHAPE)
                    red = {a % rank for a in axes}
                    out_shape = tuple(1 if d in red else n for d, n in enumerate(REDUCE_SHAPE)
                                      if keep or d not in red)
                    x = b.tensor(REDUCE_SHAPE, dtype, data=_rand(rng, REDUCE_SHAPE, dtype), **q)
                    # SUM requantises: a wider output scale (int8: another zero point)
                    qy = ({"scale": 0.3, "zero_point": -3} if (opcode, dtype) == ("SUM", "int8")
                          else {"scale": 0.0071, "zero_point": 0} if dtype == "int16" else q)
                    y = b.tensor(out_shape, dtype, **qy)
                    b.op(opcode, [x, b.const(np.asarray(axes, dtype=np.int32))], [y],
                         ReducerOptions(keep))
                    out_of[f"{opcode.lower()}-{dtype}-{k}-keep{int(keep)}"] = y
    for opcode in ("ARG_MAX", "ARG_MIN"):
        for dtype in ("int8", "float32"):
            for axis in (0, 1, 2, 3, -1, -3):
                rank = len(REDUCE_SHAPE)
                out_shape = tuple(n for d, n in enumerate(REDUCE_SHAPE) if d != axis % rank)
                # few distinct values: ties, where the first index must win
                data = rng.integers(-2, 3, size=REDUCE_SHAPE).astype(dtype)
                x = b.tensor(REDUCE_SHAPE, dtype, data=data,
                             **({"scale": 0.1, "zero_point": 1} if dtype == "int8" else {}))
                y = b.tensor(out_shape, "int32")
                b.op(opcode, [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"output_type": 2})  # TensorType.INT32
                out_of[f"{opcode.lower()}-{dtype}-axis{axis}"] = y
    for axis in (0, 1, 2, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                shape = (2, 3, 4)
                x = b.tensor(shape, "float32", data=_rand(rng, shape, "float32"))
                y = b.tensor(shape, "float32")
                b.op("CUMSUM", [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"exclusive": exclusive, "reverse": reverse})
                out_of[f"cumsum-axis{axis}-ex{int(exclusive)}-rev{int(reverse)}"] = y
    # int8 CUMSUM: TFLM's rescaling, zero points, long axes (the int32 accumulator wraps)
    cum8 = [((2, 3, 4), 1, (0.05, 3), (0.2, -10)), ((2, 3, 4), -1, (0.1, -128), (0.4, 127)),
            ((5, 7), 0, (0.02, 0), (0.05, 0)), ((1, 40, 3), 1, (0.05, -128), (0.05, -128)),
            ((3, 64), 1, (0.01, 100), (0.3, 0))]
    for k, (shape, axis, (si, zi), (so, zo)) in enumerate(cum8):
        for exclusive in (False, True):
            for reverse in (False, True):
                x = b.tensor(shape, "int8", data=_rand(rng, shape, "int8"), scale=si,
                             zero_point=zi)
                y = b.tensor(shape, "int8", scale=so, zero_point=zo)
                b.op("CUMSUM", [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"exclusive": exclusive, "reverse": reverse})
                out_of[f"cumsum-int8-{k}-ex{int(exclusive)}-rev{int(reverse)}"] = y
    # a graph input through PRELU and a reduction (activations, not constants)
    x = b.tensor((1, 4, 6), "int8", name="x", scale=0.05, zero_point=-3)
    y = b.tensor((1, 4, 6), "int8", scale=0.04, zero_point=2)
    b.op("PRELU", [x, b.const(np.arange(-3, 3, dtype=np.int8).reshape(1, 6), scale=0.1)], [y])
    z = b.tensor((1, 6), "int8", name="z", scale=0.04, zero_point=2)
    b.op("REDUCE_MAX", [y, b.const(np.asarray([1], dtype=np.int32))], [z], ReducerOptions(False))
    out_of["graph-input-prelu"] = y
    out_of["graph-input-reduce-max"] = z
    return b.build([x], [z]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 4, 6) * 5]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid])


@pytest.mark.parametrize(("opcode", "dtype", "out_scale", "match"), [
    ("REDUCE_MAX", "int8", 0.2, r"op 0 \(REDUCE_MAX\).*quantisation"),  # requantisation
    ("SUM", "int32", 0.1, r"op 0 \(SUM\).*int8 or int16 or float32"),
], ids=["reduce-max-requantisation", "sum-int32"])
def test_reduction_refuses(opcode: str, dtype: str, out_scale: float, match: str) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 3), dtype, scale=0.1, zero_point=0)
    y = b.tensor((1, 3), dtype, scale=out_scale, zero_point=0)
    b.op(opcode, [x, b.const(np.asarray([1], dtype=np.int32))], [y], ReducerOptions())
    with pytest.raises(UnsupportedError, match=match):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_prelu_refuses_mixed_dtypes() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 3), "int8", scale=0.1, zero_point=0)
    a = b.const(np.ones(3, dtype=np.float32))
    y = b.tensor((1, 4, 3), "int8", scale=0.1, zero_point=0)
    b.op("PRELU", [x, a], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(PRELU\)"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_element_wise_new_ops_run_in_place_over_a_dying_input() -> None:
    """x -> RELU -> PRELU -> GREATER -> LOGICAL_NOT: PRELU's output overwrites the RELU
    output that dies there (the elementwise trait), the comparison's bool output its
    int8 input; the plan stays bit-exact."""
    from nnopt.frontend.tflite import load_model_bytes as load
    from nnopt.planner import plan_model

    b = ModelBuilder("in place")
    q: dict[str, Any] = {"scale": 0.05, "zero_point": 0}
    x = b.tensor((1, 8, 8, 4), "int8", name="x", **q)
    r = b.tensor((1, 8, 8, 4), "int8", **q)
    b.op("RELU", [x], [r])
    p = b.tensor((1, 8, 8, 4), "int8", **q)
    b.op("PRELU", [r, b.const(np.asarray([1, -2, 3, 4], dtype=np.int8), scale=0.1)], [p])
    c = b.tensor((1, 8, 8, 4), "bool")
    b.op("GREATER", [p, b.const(np.asarray([2], dtype=np.int8), **q)], [c])
    y = b.tensor((1, 8, 8, 4), "bool", name="y")
    b.op("LOGICAL_NOT", [c], [y])
    model = b.build([x], [y])
    pm = plan_model(load(model), PlanOptions())
    inplace = dict(pm.plan.inplace)
    assert inplace.get(p) == r and inplace.get(c) == p
    inputs = [np.arange(-128, 128, dtype=np.int8).reshape(1, 8, 8, 4)]
    np.testing.assert_array_equal(run_nnopt(model, inputs)[0][0], run_tflm(model, inputs)[0][0])


@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_cumsum_refuses_what_tflm_does_not_allocate(dtype: str) -> None:
    """The installed tflite-micro fails to allocate int16 and int32 CUMSUM: refused by
    name, with the supported dtypes."""
    b = ModelBuilder()
    x = b.tensor((2, 5), dtype, scale=0.01, zero_point=0)
    y = b.tensor((2, 5), dtype, scale=0.01, zero_point=0)
    b.op("CUMSUM", [x, b.const(np.asarray([1], dtype=np.int32))], [y])
    with pytest.raises(UnsupportedError, match=rf"op 0 \(CUMSUM\).*{dtype.upper()}.*int8 or "
                                               "float32"):
        check_graph(load_model_bytes(b.build([x], [y])))


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
