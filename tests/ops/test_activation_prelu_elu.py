"""PRELU and ELU: bit-exact against TFLite Micro, in one multi-op model (one build, one
oracle run; on the host and as Cortex-M7 firmware): int8 PRELU with broadcasting alphas
of several shapes and non-zero alpha zero points, float32 PRELU; ELU's int8 table on all
256 input values for several quantisations, float32 ELU; plus the refusals and PRELU in
place over a dying input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import (
    assert_cortex_m7_matches,
    case_model_tests,
)
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder

PRELU_SHAPES = [((1, 5, 7, 3), (3,)), ((2, 4, 6), (1, 6)), ((1, 3, 4, 5), (1, 1, 1, 5)),
                ((1, 3, 4, 5), (1,)), ((3, 7), (3, 1)), ((1, 2, 3, 4), (2, 3, 4)),
                ((1, 64, 12), (1, 12))]
ELU_QUANT = [((0.05, 3), (0.03, -20)), ((0.1, -128), (0.02, 10)), ((0.0078, 0), (0.0078, 0)),
             ((0.2, 50), (0.01, -128)), ((0.004, -7), (0.05, 100))]
def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("prelu elu cases")
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
    # a graph input through PRELU (an activation, not a constant)
    x = b.tensor((1, 4, 6), "int8", name="x", scale=0.05, zero_point=-3)
    y = b.tensor((1, 4, 6), "int8", name="y", scale=0.04, zero_point=2)
    b.op("PRELU", [x, b.const(np.arange(-3, 3, dtype=np.int8).reshape(1, 6), scale=0.1)], [y])
    out_of["graph-input-prelu"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 4, 6) * 5]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF)


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


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
